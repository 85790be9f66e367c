// Command hyperpod-plan-review reports what a saved Terraform plan's compute quota changes do
// together, on the live cluster: which pending jobs start, which running ones are preempted (by
// whom, under which rule) or left over their team's nominal quota, and, per instance type,
// whether the planned quotas claim more than the healthy, schedulable nodes have. It prints
// Markdown for a pull request comment.
//
//	terraform plan -out=tfplan
//	terraform show -json tfplan > plan.json
//	hyperpod-plan-review -plan plan.json > review.md
//
// It finds the cluster as the provider does (-kubeconfig and -context, then KUBE_CONFIG_PATH,
// KUBE_CTX and the other KUBE_* variables, then $KUBECONFIG or ~/.kube/config), reads it (the
// Kueue objects and Workloads, and the Nodes) and writes nothing. The instance types are those of
// the plan's provider block: the built-in catalog with its instance_types.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os"
	"time"

	apierrors "k8s.io/apimachinery/pkg/api/errors"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/backend"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/kube"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/review"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/review/reviewinput"
)

func main() {
	if err := run(context.Background(), os.Args[1:], os.Stdin, os.Stdout); err != nil {
		fmt.Fprintln(os.Stderr, "hyperpod-plan-review:", err)
		os.Exit(1)
	}
}

// readTimeout bounds the reads of the cluster.
const readTimeout = 30 * time.Second

func run(ctx context.Context, args []string, stdin io.Reader, stdout io.Writer) error {
	fs := flag.NewFlagSet("hyperpod-plan-review", flag.ContinueOnError)
	planPath := fs.String("plan", "-", "`file` of `terraform show -json <saved plan>` (- reads standard input)")
	kubeconfig := fs.String("kubeconfig", "", "kubeconfig `file` of the cluster (default: as the provider, $KUBE_CONFIG_PATH; "+
		"then $KUBECONFIG, then ~/.kube/config)")
	kubeContext := fs.String("context", "", "kubeconfig `context` (default: as the provider, $KUBE_CTX; then the current one)")
	if err := fs.Parse(args); err != nil {
		return err
	}
	plan, err := readPlan(*planPath, stdin)
	if err != nil {
		return err
	}
	settings, err := kube.ReviewSettings(*kubeconfig, *kubeContext, os.LookupEnv)
	if err != nil {
		return err
	}
	readCtx, cancel := context.WithTimeout(ctx, readTimeout)
	defer cancel()
	in, err := reviewinput.Read(readCtx, kube.NewClient(settings), plan)
	if _, refused := errors.AsType[*backend.ReadsRefused](err); refused {
		return fmt.Errorf("reading the cluster: %w", err)
	} else if apierrors.IsForbidden(err) {
		return fmt.Errorf("reading the cluster: %w; bind the identity of the kubeconfig to the ClusterRole of %s", err, review.Role)
	} else if err != nil {
		return fmt.Errorf("reading the cluster: %w", err)
	}
	report, err := review.Build(in)
	if err != nil {
		return err
	}
	_, err = io.WriteString(stdout, report.Markdown())
	return err
}

// readPlan reads the compute quota changes of a plan in `terraform show -json` form.
func readPlan(path string, stdin io.Reader) (review.Plan, error) {
	r := stdin
	if path != "-" {
		f, err := os.Open(path)
		if err != nil {
			return review.Plan{}, err
		}
		defer f.Close()
		r = f
	}
	return review.ReadPlan(r)
}
