package lint

import (
	"go/ast"
	"go/parser"
	"go/token"
	"io/fs"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"testing"
)

// maxFuncLines is the most lines a function body of non-test code may have (the lines between its
// braces); a longer one is split into named steps.
const maxFuncLines = 80

// longSchemaFuncs are the only functions allowed to be longer: each builds a Terraform schema, a
// table with one entry per attribute, which reads best whole. Named as file: receiver.function.
var longSchemaFuncs = []string{
	"internal/provider/compute_quota_resource.go: computeQuotaResource.Schema",
	"internal/provider/provider.go: hyperpodProvider.Schema",
	"internal/provider/cluster_scheduler_config_resource.go: clusterSchedulerConfigResource.Schema",
	"internal/provider/team_namespace_resource.go: teamNamespaceResource.Schema",
}

// repoRoot is the repository's top, seen from this package's folder.
const repoRoot = "../.."

func TestFunctionLength(t *testing.T) {
	long := longFuncs(t, repoRoot)
	for _, f := range long {
		if !slices.Contains(longSchemaFuncs, f.name) {
			t.Errorf("%s: body of %d lines, more than %d: split it into named steps", f.name, f.lines, maxFuncLines)
		}
	}
	// An entry that no longer needs its exemption goes, so the list stays the exact set of exceptions.
	for _, allowed := range longSchemaFuncs {
		if !slices.ContainsFunc(long, func(f longFunc) bool { return f.name == allowed }) {
			t.Errorf("%s is allowed to be long but is not (or no longer exists): remove it from longSchemaFuncs", allowed)
		}
	}
}

// TestLongFuncs checks the checker on a small tree: it measures bodies, skips tests and names
// methods by receiver.
func TestLongFuncs(t *testing.T) {
	dir := t.TempDir()
	body := strings.Repeat("\t_ = 0\n", maxFuncLines)
	files := map[string]string{
		"a.go":      "package a\n\nfunc fits() {\n" + body + "}\n\nfunc tooLong() {\n" + body + "\t_ = 1\n}\n",
		"b.go":      "package a\n\ntype T struct{}\n\nfunc (t *T) Method() {\n" + body + "\t_ = 1\n}\n",
		"a_test.go": "package a\n\nfunc testHelper() {\n" + body + "\t_ = 1\n}\n",
	}
	for name, text := range files {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(text), 0o600); err != nil {
			t.Fatal(err)
		}
	}
	got := longFuncs(t, dir)
	want := []longFunc{{"a.go: tooLong", maxFuncLines + 1}, {"b.go: T.Method", maxFuncLines + 1}}
	if !slices.Equal(got, want) {
		t.Errorf("longFuncs = %v, want %v", got, want)
	}
}

type longFunc struct {
	name  string // file relative to the root: receiver.function
	lines int
}

// longFuncs lists the functions of the non-test Go files below root whose bodies are longer than
// maxFuncLines, in file order.
func longFuncs(t *testing.T, root string) []longFunc {
	t.Helper()
	var long []longFunc
	fset := token.NewFileSet()
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		if d.IsDir() {
			if path != root && (strings.HasPrefix(d.Name(), ".") || d.Name() == "testdata" || d.Name() == "vendor") {
				return filepath.SkipDir
			}
			return nil
		}
		if !strings.HasSuffix(path, ".go") || strings.HasSuffix(path, "_test.go") {
			return nil
		}
		f, err := parser.ParseFile(fset, path, nil, parser.SkipObjectResolution)
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		for _, decl := range f.Decls {
			fn, ok := decl.(*ast.FuncDecl)
			if !ok || fn.Body == nil {
				continue
			}
			lines := fset.Position(fn.Body.Rbrace).Line - fset.Position(fn.Body.Lbrace).Line - 1
			if lines > maxFuncLines {
				long = append(long, longFunc{filepath.ToSlash(rel) + ": " + funcName(fn), lines})
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	return long
}

// funcName is a function's name, a method's prefixed by its receiver's type.
func funcName(fn *ast.FuncDecl) string {
	if fn.Recv == nil || len(fn.Recv.List) == 0 {
		return fn.Name.Name
	}
	recv := fn.Recv.List[0].Type
	if star, ok := recv.(*ast.StarExpr); ok {
		recv = star.X
	}
	if generic, ok := recv.(*ast.IndexExpr); ok {
		recv = generic.X
	}
	if generic, ok := recv.(*ast.IndexListExpr); ok {
		recv = generic.X
	}
	if id, ok := recv.(*ast.Ident); ok {
		return id.Name + "." + fn.Name.Name
	}
	return fn.Name.Name
}
