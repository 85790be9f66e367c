// Command catalogdoc writes the documentation page of the built-in instance catalog
// (internal/catalog) as a tfplugindocs guide template, so the page is made from the figures
// the provider uses and cannot go stale. `make docs` runs it before tfplugindocs
// (main.go's go:generate lines); its test fails when the committed page differs.
//
//	go run ./internal/cmd/catalogdoc -out templates/guides/instance-catalog.md.tmpl
package main

import (
	"flag"
	"fmt"
	"os"
	"strconv"
	"strings"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
)

// pagePath is where the page goes, relative to the repository root.
const pagePath = "templates/guides/instance-catalog.md.tmpl"

func main() {
	out := flag.String("out", pagePath, "file to write the page to")
	flag.Parse()
	if err := os.WriteFile(*out, []byte(render(catalog.Builtin())), 0o644); err != nil {
		fmt.Fprintln(os.Stderr, "catalogdoc:", err)
		os.Exit(1)
	}
}

// render is the page: an introduction and one table row per instance type, grouped by family
// with sizes smallest first. It is a template for tfplugindocs, so it holds no "{{".
func render(c *catalog.Catalog) string {
	names := c.NamesBySize()
	var b strings.Builder
	b.WriteString(`---
page_title: "Instance catalog"
subcategory: "Guides"
description: |-
  The instance types the provider knows without configuration, and their accelerators, vCPU, memory, EFA interfaces and MIG profiles per instance.
---

<!-- Generated from internal/catalog by internal/cmd/catalogdoc (make docs). Do not edit. -->

# Instance catalog

`)
	fmt.Fprintf(&b, `The provider knows the figures of %d SageMaker HyperPod instance types, per instance. They are what
`+"`hyperpod_compute_quota`"+` computes unset amounts from (HyperPod's ratio rule, during plan), what
`+"`provider::hyperpod::instance_type`"+` returns, and the per-instance figures `+"`hyperpod_instance_type_capacity`"+`
reports. The provider block's `+"`instance_types`"+` overrides any figure of a type listed here,
or adds a type that is not.

* **accelerators**: devices per instance, with the accelerator model; the quota's `+"`accelerators`"+` counts them.
* **resource name**: the extended resource the device plugin registers, and the resource of the ClusterQueue.
* **EFA**: EFA interfaces (`+"`%s`"+`) per instance.
* **MIG profiles**: the GPU partitions `+"`accelerator_partition`"+` accepts (NVIDIA MIG), as the resource
  `+"`nvidia.com/<profile>`"+`.

| instance type | accelerators | resource name | vCPU | memory (GiB) | EFA | MIG profiles |
|---|---|---|---|---|---|---|
`, len(names), catalog.ResourceEFA)
	for _, name := range names {
		t, _ := c.Lookup(name)
		accelerators, resource := "0", "-"
		if t.Accelerators > 0 {
			accelerators = strconv.FormatInt(t.Accelerators, 10)
			if t.AcceleratorType != "" {
				accelerators += " " + t.AcceleratorType
			}
			resource = "`" + t.AcceleratorResource + "`"
		}
		mig := "-"
		if len(t.MIGProfiles) > 0 {
			mig = "`" + strings.Join(t.MIGProfiles, "`, `") + "`"
		}
		fmt.Fprintf(&b, "| `%s` | %s | %s | %s | %s | %d | %s |\n", t.Name, accelerators, resource,
			number(t.VCPU), number(t.MemoryGiB), t.EFA, mig)
	}
	return b.String()
}

// number writes a figure as short as it is exact: 48, 5.25.
func number(v float64) string { return strconv.FormatFloat(v, 'f', -1, 64) }
