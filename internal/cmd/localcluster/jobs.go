package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"os/signal"
	"slices"
	"syscall"
	"time"

	batchv1 "k8s.io/api/batch/v1"

	"k8s.io/client-go/dynamic"
	"k8s.io/client-go/kubernetes"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
)

const (
	// jobsRequestTimeout bounds each API request of `localcluster jobs`; --timeout bounds the
	// wait for each Kueue decision.
	jobsRequestTimeout = 30 * time.Second
	jobsDefaultTimeout = 60 * time.Second
)

// jobsOptions are the flags of `localcluster jobs`.
type jobsOptions struct {
	file       string        // --file: batch/v1 Jobs separated by "---"
	submit     bool          // --submit: replace the jobs and wait for Kueue's decisions
	delete     bool          // --delete: delete the jobs and their Workloads
	kubeconfig string        // --kubeconfig, else $KUBE_CONFIG_PATH, else <dir>/kubeconfig
	context    string        // --context, else $KUBE_CTX, else the kubeconfig's current context
	timeout    time.Duration // --timeout: how long to wait for Kueue to decide each job
	// --wait-admitted: before printing, wait until Kueue admits this job (namespace/name)
	waitAdmitted string
}

// register adds the jobs flags to fs.
func (o *jobsOptions) register(fs *flag.FlagSet) {
	fs.StringVar(&o.file, "file", "", "file of batch/v1 Jobs separated by \"---\" (required)")
	fs.BoolVar(&o.submit, "submit", false, "create the jobs in order, each replacing a Job of the same name, and print what Kueue decided")
	fs.BoolVar(&o.delete, "delete", false, "delete the jobs and their Workloads")
	fs.StringVar(&o.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default $KUBE_CONFIG_PATH, else the one in --dir)")
	fs.StringVar(&o.context, "context", "", "kubeconfig context (default $KUBE_CTX, else the current context)")
	fs.DurationVar(&o.timeout, "timeout", jobsDefaultTimeout, "with --submit, how long to wait for Kueue to decide each job; with --wait-admitted, for that job")
	fs.StringVar(&o.waitAdmitted, "wait-admitted", "", "without --submit or --delete: wait until Kueue admits this job (namespace/name), then print the decisions")
}

// validate reports flag combinations that make no sense.
func (o jobsOptions) validate() error {
	switch {
	case o.file == "":
		return errors.New("jobs: --file is required")
	case o.submit && o.delete:
		return errors.New("jobs: --submit and --delete exclude each other")
	case o.timeout <= 0:
		return fmt.Errorf("jobs: --timeout must be positive, not %s", o.timeout)
	}
	return nil
}

// jobs submits, deletes or reports the jobs of opts.file: with --submit it replaces them and
// prints Kueue's decisions, with --delete it deletes them and their Workloads, and otherwise it
// prints the current decisions.
func jobs(dir string, opts jobsOptions, out io.Writer) error {
	list, err := localcluster.ReadJobs(opts.file)
	if err != nil {
		return err
	}
	if len(list) == 0 {
		return fmt.Errorf("%s holds no jobs", opts.file)
	}
	cfg, dyn, err := clusterClient(dir, opts.kubeconfig, opts.context, jobsRequestTimeout)
	if err != nil {
		return err
	}
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()

	switch {
	case opts.submit:
		decisions, err := localcluster.SubmitJobs(ctx, cs, dyn, list, opts.timeout)
		if err != nil {
			return err
		}
		localcluster.FormatDecisions(out, decisions)
	case opts.delete:
		if err := localcluster.DeleteJobs(ctx, cs, dyn, list); err != nil {
			return err
		}
		fmt.Fprintf(out, "deleted the %d jobs of %s and their Workloads\n", len(list), opts.file)
	default:
		decisions, err := decisionsOnceAdmitted(ctx, dyn, list, opts.waitAdmitted, opts.timeout)
		if err != nil {
			return err
		}
		localcluster.FormatDecisions(out, decisions)
	}
	return nil
}

// decisionsOnceAdmitted reads the jobs' decisions, once Kueue has admitted the job named
// waitFor (none: at once); it fails when that takes longer than timeout.
func decisionsOnceAdmitted(ctx context.Context, dyn dynamic.Interface, list []batchv1.Job, waitFor string, timeout time.Duration) ([]localcluster.JobDecision, error) {
	var decisions []localcluster.JobDecision
	err := localcluster.WaitUntil(ctx, time.Now().Add(timeout), 200*time.Millisecond, func(ctx context.Context) (bool, error) {
		var err error
		if decisions, err = localcluster.Decisions(ctx, dyn, list); err != nil || waitFor == "" {
			return true, err
		}
		return slices.ContainsFunc(decisions, func(d localcluster.JobDecision) bool {
			return d.Namespace+"/"+d.Job == waitFor && d.State == "Admitted"
		}), nil
	}, func() error {
		return fmt.Errorf("jobs: %s not admitted within %s", waitFor, timeout)
	})
	return decisions, err
}
