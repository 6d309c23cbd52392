-- fair_acquire: take or re-enter a Redisson-compatible fair lock, or wait in
-- its queue.
--
-- KEYS[1]  lock hash (as lock_acquire)
-- KEYS[2]  fencing counter (see prelude_fencing)
-- KEYS[3]  zset redisson_lock_alive:{name} (ours): owner -> ms time until
--          which a waiter of this library is known to be alive
-- KEYS[4]  queue redisson_lock_queue:{name}: owner fields in arrival order
-- KEYS[5]  zset redisson_lock_timeout:{name}: owner -> Redisson's estimate
--          of when the waiter should have had its turn (plus its wait)
-- ARGV[1]  lease in milliseconds
-- ARGV[2]  owner field
-- ARGV[3]  the hold count the owner had before this call
-- KEYS[6]  channel prefix redisson_lock__channel:{name}; a waiter listens on
--          "<prefix>:<owner>"
-- ARGV[4]  'wait' to join (or stay in) the queue when the lock is taken
-- ARGV[5]  publish command for the lease-change message ('publish' or
--          'spublish'; '': none)
-- ARGV[6]  waiter lifetime in ms: a waiter of ours must call again within it
-- ARGV[7]  the fencing counter's idle lifetime in ms ('0': no expiry)
-- ARGV[8]  this waiter's wait allowance in ms, as Redisson's: the caller's
--          wait when it gave one, else fairLockWaitTimeout (5 min)
--
-- A waiter is dead when its liveness (ours) has lapsed, or, for a waiter
-- without one (Redisson's), when its timeout has passed. The timeout scores
-- follow Redisson's arithmetic (each waiter: the previous one's + its wait
-- allowance; every acquisition moves them all up by the acquirer's), so that
-- Redisson clients read a consistent queue. Time is the Redis server's clock.
-- A waiter of ours that joins or stays in the queue gives the queue and the
-- timeout zset an expiry: until the latest deadline in the zset (at least
-- twice the waiter lifetime), after which every entry is dead anyway.
--
-- A waiter bounds each sleep by the lease its last try reported, so the live
-- head of the queue hears of every lease it has not seen: a new hold with a
-- lease shorter than the waiter lifetime (a holder that dies with it frees
-- the lock before the head's next heartbeat), and a re-entry that shortens
-- the lease, get the lease-change message -1 - <ms> on the head's own
-- channel (prelude_lease). Redisson's waiters ignore it (they act on 0).
--
-- Returns {count, token} when held, or {0, pttl} when not (-2: free but
-- another waiter's turn). Idempotent per call like lock_acquire.
--
-- prelude: fencing, lease
--          (uses nextToken and setLease)
local t = redis.call('time')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local allowance = tonumber(ARGV[8])

-- liveHead drops the dead waiters at the head of the queue and returns the
-- live head (false: the queue is empty).
local function liveHead()
    while true do
        local head = redis.call('lindex', KEYS[4], 0)
        if not head then
            return false
        end
        local alive = tonumber(redis.call('zscore', KEYS[3], head))
        local deadline = tonumber(redis.call('zscore', KEYS[5], head))
        if alive ~= nil then
            if alive > now then
                return head
            end
        elseif deadline ~= nil and deadline > now then
            return head
        end
        redis.call('lpop', KEYS[4])
        redis.call('zrem', KEYS[5], head)
        redis.call('zrem', KEYS[3], head)
    end
end

-- nextChannel is the own channel of the live head after the acquirer (nil:
-- nobody waits).
local function nextChannel()
    local head = liveHead()
    if head and head ~= ARGV[2] then
        return KEYS[6] .. ':' .. head
    end
    return nil
end

-- The reads until head's next use change nothing.
local head = liveHead()

local pttl = redis.call('pttl', KEYS[1])
local held = 0
if pttl ~= -2 then
    held = tonumber(redis.call('hget', KEYS[1], ARGV[2]) or 0)
    if held > 0 and held == tonumber(ARGV[3]) + 1 then
        redis.call('pexpire', KEYS[1], ARGV[1])
        return {held, tonumber(redis.call('get', KEYS[2]) or 0)}
    end
end
if held > 0 or (pttl == -2 and (head == false or head == ARGV[2])) then
    local token = nextToken(KEYS[2], ARGV[7], t)
    if held == 0 then
        if head == ARGV[2] then
            redis.call('lpop', KEYS[4])
            -- Everyone moves up one turn (Redisson's arithmetic).
            local waiters = redis.call('zrange', KEYS[5], 0, -1)
            for i = 1, #waiters do
                if waiters[i] ~= ARGV[2] then
                    redis.call('zincrby', KEYS[5], -allowance, waiters[i])
                end
            end
        end
        redis.call('zrem', KEYS[5], ARGV[2])
        redis.call('zrem', KEYS[3], ARGV[2])
        redis.call('hset', KEYS[1], ARGV[2], 1)
        redis.call('pexpire', KEYS[1], ARGV[1])
        local ch = nextChannel()
        if ch and ARGV[5] ~= '' and tonumber(ARGV[1]) < tonumber(ARGV[6]) then
            redis.call(ARGV[5], ch, string.format('%d', -1 - tonumber(ARGV[1])))
        end
        return {1, token}
    end
    held = redis.call('hincrby', KEYS[1], ARGV[2], 1)
    local ch = nextChannel()
    if ch then
        setLease(KEYS[1], ARGV[1], ch, ARGV[5])
    else
        redis.call('pexpire', KEYS[1], ARGV[1])
    end
    return {held, token}
end
if ARGV[4] == 'wait' then
    if redis.call('zscore', KEYS[5], ARGV[2]) == false then
        local ttl = pttl
        local last = redis.call('lindex', KEYS[4], -1)
        if last and last ~= ARGV[2] then
            local score = tonumber(redis.call('zscore', KEYS[5], last))
            if score ~= nil then
                ttl = score - now
            end
        end
        redis.call('zadd', KEYS[5], math.max(ttl, 0) + allowance + now, ARGV[2])
        redis.call('lrem', KEYS[4], 0, ARGV[2])
        redis.call('rpush', KEYS[4], ARGV[2])
    end
    local life = tonumber(ARGV[6])
    redis.call('zadd', KEYS[3], now + life, ARGV[2])
    -- All its entries are stale once nobody refreshed any for that long.
    redis.call('pexpire', KEYS[3], 2 * life)
    local latest = redis.call('zrange', KEYS[5], -1, -1, 'withscores')
    local keep = 2 * life
    if latest[2] then
        keep = math.max(keep, math.ceil(tonumber(latest[2]) - now))
    end
    redis.call('pexpire', KEYS[4], keep)
    redis.call('pexpire', KEYS[5], keep)
end
return {0, pttl}
