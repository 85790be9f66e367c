package main

import (
	"fmt"
	"strings"
)

// shapesIntro explains the workspace shapes tables.
const shapesIntro = "Each team is one `hyperpod_team_namespace` and one `hyperpod_compute_quota` (three instance types, " +
	"`fair_share_weight = 1`), written with `for_each` over `var.teams` in the shapes below, and measured beside a " +
	"`terraform_data` configuration of the same shape: the same for_each, the same references and `depends_on`, the module " +
	"shape calling a module of two `terraform_data` with the example module's edge.  CPU is the user and system time of Terraform and the provider processes it ran (all cores): on a busy machine it moves far less than wall time. One run per command (the load " +
	"average is the machine's one-minute figure when the command started; other work shares the machine). The shapes " +
	"that share their resource addresses share one apply (in the first of them) and each plans against that state; " +
	"the plans of new resources run against an empty state first. ratio = provider wall / terraform_data wall of " +
	"the same shape (the chained shape's -refresh=false and -parallelism plans are compared with its default no-op plan's terraform_data figure, named in brackets); with reads, the floor also counts one GET of every object sent one after another (as in the main " +
	"tables)."

func renderShapes(b *strings.Builder, shapes []*shapeResult) {
	if len(shapes) == 0 {
		return
	}
	b.WriteString("## Workspace shapes\n\n" + shapesIntro + "\n\n")
	for i, s := range shapes {
		if i == 0 || shapes[i-1].Teams != s.Teams {
			fmt.Fprintf(b, "### %d teams\n\n", s.Teams)
			b.WriteString("| shape | command | wall (s) | CPU (s) | requests | terraform_data wall (s) | terraform_data CPU (s) | ratio | CPU ratio | ratio with reads | load (provider / terraform_data) | peak RSS (MB) |\n")
			b.WriteString("|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|\n")
		}
		for _, c := range s.Samples {
			reqs := "-"
			if c.Provider.Requests != nil {
				reqs = fmt.Sprint(c.Provider.Requests.Total)
			}
			floor, floorCPU := fmt.Sprintf("%.2f", c.TerraformData.WallSeconds), fmt.Sprintf("%.2f", c.TerraformData.CPUSeconds)
			if c.FloorOp != "" {
				floor += " (" + c.FloorOp + ")"
				floorCPU += " (" + c.FloorOp + ")"
			}
			fmt.Fprintf(b, "| %s | %s | %.2f | %.2f | %s | %s | %s | %s | %s | %s | %.2f / %.2f | %.1f |\n", s.Shape, c.Op, c.Provider.WallSeconds,
				c.Provider.CPUSeconds, reqs, floor, floorCPU, ratioText(c.Ratio), ratioText(c.CPURatio), ratioText(c.RatioReads), c.ProviderLoad, c.FloorLoad,
				float64(c.Provider.PeakRSSBytes)/1e6)
		}
		if i == len(shapes)-1 || shapes[i+1].Teams != s.Teams {
			b.WriteString("\n")
			writeShapeLegend(b, shapes, s.Teams)
		}
	}
}

// writeShapeLegend lists what each shape at n teams is.
func writeShapeLegend(b *strings.Builder, shapes []*shapeResult, n int) {
	for _, s := range shapes {
		if s.Teams == n {
			fmt.Fprintf(b, "- **%s**: %s\n", s.Shape, s.Description)
		}
	}
	b.WriteString("\n")
}
