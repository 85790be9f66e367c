package main

import (
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"testing"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// The committed page is the one the built-in catalog renders: a catalog change without
// `make docs` fails here.
func TestCommittedPageMatchesCatalog(t *testing.T) {
	committed, err := os.ReadFile(filepath.Join("..", "..", "..", pagePath))
	if err != nil {
		t.Fatal(err)
	}
	if got := render(catalog.Builtin()); string(committed) != got {
		t.Errorf("%s differs from the built-in catalog: run `make docs` and commit the result", pagePath)
	}
}

// Each instance type has one row with its own figures, in the order NamesBySize gives, and the
// page holds nothing tfplugindocs would take for a template action.
func TestRenderRows(t *testing.T) {
	c, errs := catalog.New(map[string]catalog.Override{
		"ml.g5.xlarge":  {VCPU: new(3.5)},
		"ml.zz.4xlarge": {VCPU: new(16.0), MemoryGiB: new(5.25), Accelerators: new(int64(2)), AcceleratorResource: new("example.com/npu")},
	})
	if len(errs) > 0 {
		t.Fatalf("catalog.New: %v", errs)
	}
	page := render(c)
	if strings.Contains(page, "{{") {
		t.Error("the page holds \"{{\", which tfplugindocs reads as a template action")
	}
	var rows []string
	for _, line := range strings.Split(page, "\n") {
		if strings.HasPrefix(line, "| `ml.") {
			rows = append(rows, line)
		}
	}
	names := c.NamesBySize()
	if len(rows) != len(names) {
		t.Fatalf("%d rows, want one per instance type (%d)", len(rows), len(names))
	}
	if !strings.Contains(page, " "+strconv.Itoa(len(names))+" SageMaker HyperPod instance types") {
		t.Errorf("the introduction does not give the number of types, %d", len(names))
	}
	for i, name := range names {
		it, _ := c.Lookup(name)
		cells := strings.Split(strings.Trim(rows[i], "|"), "|")
		for j := range cells {
			cells[j] = strings.TrimSpace(cells[j])
		}
		for _, w := range []struct {
			cell         int
			column, want string
		}{
			{0, "instance type", "`" + name + "`"},
			{3, "vCPU", strconv.FormatFloat(it.VCPU, 'f', -1, 64)},
			{4, "memory (GiB)", strconv.FormatFloat(it.MemoryGiB, 'f', -1, 64)},
			{5, "EFA", strconv.FormatInt(it.EFA, 10)},
		} {
			if cells[w.cell] != w.want {
				t.Errorf("row %d (%s): %s = %q, want %q", i, name, w.column, cells[w.cell], w.want)
			}
		}
		if !strings.HasPrefix(cells[1], strconv.FormatInt(it.Accelerators, 10)) {
			t.Errorf("row %d (%s): accelerators = %q, want %d", i, name, cells[1], it.Accelerators)
		}
		if it.Accelerators > 0 && cells[2] != "`"+it.AcceleratorResource+"`" {
			t.Errorf("row %d (%s): resource name = %q, want %s", i, name, cells[2], it.AcceleratorResource)
		}
		for _, p := range it.MIGProfiles {
			if !strings.Contains(cells[6], "`"+p+"`") {
				t.Errorf("row %d (%s): MIG profiles %q lack %s", i, name, cells[6], p)
			}
		}
	}
}
