package redisson

import (
	"go/ast"
	"go/parser"
	"go/token"
	"os"
	"path/filepath"
	"regexp"
	"strings"
	"testing"
)

// constructor is a function that hands out an object: a method of *Client
// named Get..., or a package function named Get... or New....
type constructor struct {
	name   string // as doc.go names it: "GetLock", "GetMap", "NewRedLock"
	method bool   // a method of *Client
	result string // the type it returns, "Lock", "Map"
}

// constructors lists the package's constructors from its non-test files.
func constructors(t *testing.T) []constructor {
	t.Helper()
	files, err := filepath.Glob("*.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	var out []constructor
	for _, f := range files {
		if strings.HasSuffix(f, "_test.go") {
			continue
		}
		file, err := parser.ParseFile(fset, f, nil, parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, d := range file.Decls {
			fn, ok := d.(*ast.FuncDecl)
			if !ok || !fn.Name.IsExported() || fn.Type.Results == nil || len(fn.Type.Results.List) == 0 {
				continue
			}
			name := fn.Name.Name
			c := constructor{name: name, result: typeName(fn.Type.Results.List[0].Type)}
			switch {
			case fn.Recv != nil:
				if typeName(fn.Recv.List[0].Type) != "Client" || !strings.HasPrefix(name, "Get") {
					continue
				}
				c.method = true
			case strings.HasPrefix(name, "Get"), strings.HasPrefix(name, "New") && name != "New":
			default:
				continue
			}
			if c.result == "" {
				continue
			}
			out = append(out, c)
		}
	}
	if len(out) < 25 {
		t.Fatalf("found %d constructors; the parser misses some", len(out))
	}
	return out
}

// typeName is the name of the type an expression like *Map[K, V] denotes.
func typeName(e ast.Expr) string {
	for {
		switch x := e.(type) {
		case *ast.StarExpr:
			e = x.X
		case *ast.IndexExpr:
			e = x.X
		case *ast.IndexListExpr:
			e = x.X
		case *ast.Ident:
			return x.Name
		default:
			return ""
		}
	}
}

// TestDocOverviewListsEveryObject fails when the package overview (doc.go)
// does not name a constructor, so that go doc's first page lists every object
// the Client hands out.
func TestDocOverviewListsEveryObject(t *testing.T) {
	src, err := os.ReadFile("doc.go")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(src)
	for _, c := range constructors(t) {
		if !regexp.MustCompile(`\b` + c.name + `\b`).MatchString(doc) {
			t.Errorf("doc.go does not mention %s (returns %s): add a line for it to the overview's list of objects", c.name, c.result)
		}
	}
}

// TestEveryObjectHasAnExample fails when a constructor has no runnable
// Example: ExampleClient_GetX or ExampleGetX for the constructor, or
// ExampleT (or ExampleT_...) for the type T it returns.
func TestEveryObjectHasAnExample(t *testing.T) {
	files, err := filepath.Glob("*_test.go")
	if err != nil {
		t.Fatal(err)
	}
	fset := token.NewFileSet()
	examples := map[string]bool{}
	withOutput := 0
	for _, f := range files {
		file, err := parser.ParseFile(fset, f, nil, parser.ParseComments|parser.SkipObjectResolution)
		if err != nil {
			t.Fatal(err)
		}
		for _, ex := range exampleFuncs(file) {
			examples[ex] = true
			withOutput++
		}
	}
	if withOutput == 0 {
		t.Fatal("no Example with an Output comment found")
	}
	for _, c := range constructors(t) {
		names := []string{"Example" + c.name, "Example" + c.result}
		if c.method {
			names[0] = "ExampleClient_" + c.name
		}
		found := false
		for ex := range examples {
			if ex == names[0] || ex == names[1] || strings.HasPrefix(ex, names[1]+"_") {
				found = true
				break
			}
		}
		if !found {
			t.Errorf("no Example with an // Output: for %s (returns %s): want %s, or %s or %s_...", c.name, c.result, names[0], names[1], names[1])
		}
	}
}

// exampleFuncs returns the names of the Example functions of file whose body
// ends with an Output comment, the ones go test runs and checks.
func exampleFuncs(file *ast.File) []string {
	var out []string
	for _, d := range file.Decls {
		fn, ok := d.(*ast.FuncDecl)
		if !ok || fn.Recv != nil || !strings.HasPrefix(fn.Name.Name, "Example") || fn.Body == nil {
			continue
		}
		for _, cg := range file.Comments {
			if cg.Pos() > fn.Body.Lbrace && cg.End() < fn.Body.Rbrace && strings.HasPrefix(strings.TrimSpace(cg.Text()), "Output:") {
				out = append(out, fn.Name.Name)
				break
			}
		}
	}
	return out
}
