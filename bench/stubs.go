package main

import "context"

func runRate(ctx context.Context, s *suite) error     { return nil }
func runWatchdog(ctx context.Context, s *suite) error { return nil }
func runPubSub(ctx context.Context, s *suite) error   { return nil }
