// Command localcluster runs the local control plane (kube-apiserver + etcd + Kueue CRDs +
// fake HyperPod nodes, see internal/localcluster) in the background, for `make cluster-up`
// and `make cluster-down`.
//
//	localcluster up    [--dir .cache/localcluster] [--assets DIR]  start it detached, wait until it answers
//	localcluster down  [--dir .cache/localcluster]                 stop it (idempotent)
//	localcluster serve [--dir .cache/localcluster] [--assets DIR]  run it in the foreground until SIGTERM/SIGINT
//	localcluster up|down|serve --task-governance [--dir .cache/localcluster-tg] [--assets DIR]
//	                                                               the same, as a HyperPod cluster with the
//	                                                               task-governance add-on (make demo-task-governance)
//	localcluster queues [--kubeconfig PATH] [--context NAME] [--all] print the provider's Kueue queues per team
//	localcluster jobs --file PATH [--submit | --delete] [--kubeconfig PATH] [--context NAME] [--timeout 60s]
//	                                                               submit or delete Jobs, print Kueue's decisions
//	localcluster check-disposable [--started-here]                  refuse (exit 1) a cluster the harness did not start
//
// queues and jobs read any cluster: the kubeconfig is --kubeconfig, else $KUBE_CONFIG_PATH, else
// the one in --dir (the context --context, else $KUBE_CTX, else the current one). jobs --submit
// replaces the file's Jobs (and their Workloads), creates them in order, waits for Kueue to decide
// each, prints the decisions and returns once the ClusterQueues' status counts them; --delete
// deletes them; without either it prints the current decisions.
//
// With --task-governance the control plane carries the add-on's mark, so the provider's Kubernetes
// path refuses to write to it, and the serve process also serves the SageMaker API emulator with
// the add-on's stand-in as writer (package addon); the emulator's objects live as long as the
// process. Its default work directory is another, so `make demo` and `make demo-task-governance`
// each have a control plane of their own.
//
// The work directory holds kubeconfig, localcluster.pid, localcluster.log and the
// control plane logs, and with --task-governance provider.hcl, the provider block that reaches
// the cluster through the emulator.
package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"os"
	"os/exec"
	"os/signal"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"k8s.io/client-go/kubernetes"
	"k8s.io/client-go/tools/clientcmd"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/localcluster"
)

const (
	pidFile = "localcluster.pid"
	logFile = "localcluster.log"

	upTimeout   = 120 * time.Second
	downTimeout = 30 * time.Second
)

func main() {
	log := func(format string, args ...any) { fmt.Fprintf(os.Stderr, "localcluster: "+format+"\n", args...) }
	if len(os.Args) < 2 {
		usage()
		os.Exit(2)
	}
	cmd := os.Args[1]
	fs := flag.NewFlagSet("localcluster "+cmd, flag.ExitOnError)
	dir := fs.String("dir", "", "work directory (kubeconfig, pid file, logs; default "+defaultDir+", with --"+taskGovernanceFlag+" "+defaultTaskGovernanceDir+")")
	taskGovernance := fs.Bool(taskGovernanceFlag, false, "a HyperPod cluster with the task-governance add-on: its mark and the SageMaker API emulator (up, serve; down and the rest only pick the default --dir)")
	assets := fs.String("assets", "", "directory holding kube-apiserver, etcd and crds/ (default: as scripts/controlplane-assets.sh, $"+localcluster.EnvAssetsDir+")")
	var qopts queuesOptions
	if cmd == "queues" {
		fs.StringVar(&qopts.kubeconfig, "kubeconfig", "", "kubeconfig of the cluster (default $KUBE_CONFIG_PATH, else the one in --dir)")
		fs.StringVar(&qopts.context, "context", "", "kubeconfig context (default $KUBE_CTX, else the current context)")
		fs.BoolVar(&qopts.all, "all", false, "also list resources whose quota and limits are all zero")
	}
	var jopts jobsOptions
	if cmd == "jobs" {
		jopts.register(fs)
	}
	startedHere := false
	if cmd == "check-disposable" {
		fs.BoolVar(&startedHere, "started-here", false, "KUBE_CONFIG_PATH names a control plane the caller started (not advised to unset it)")
	}
	_ = fs.Parse(os.Args[2:])
	if fs.NArg() > 0 {
		log("unexpected arguments: %v", fs.Args())
		os.Exit(2)
	}
	if cmd == "jobs" {
		if err := jopts.validate(); err != nil {
			log("%v", err)
			os.Exit(2)
		}
	}
	abs, err := filepath.Abs(workDir(*dir, *taskGovernance))
	if err != nil {
		log("%v", err)
		os.Exit(1)
	}

	switch cmd {
	case "up":
		err = up(abs, *assets, *taskGovernance)
	case "serve":
		err = serve(abs, *assets, *taskGovernance)
	case "down":
		err = down(abs)
	case "queues":
		err = queues(abs, qopts, os.Stdout)
	case "jobs":
		err = jobs(abs, jopts, os.Stdout)
	case "check-disposable":
		err = checkDisposable(startedHere)
	case "-h", "--help", "help":
		usage()
		return
	default:
		usage()
		os.Exit(2)
	}
	if err != nil {
		log("%v", err)
		os.Exit(1)
	}
}

func usage() {
	fmt.Fprintln(os.Stderr, `usage: localcluster up|down|serve [--task-governance] [--dir DIR] [--assets DIR]
       localcluster queues [--kubeconfig PATH] [--context NAME] [--all]
       localcluster jobs --file PATH [--submit | --delete] [--kubeconfig PATH] [--context NAME] [--timeout 60s]
  up      start the local control plane in the background and wait until it answers
  down    stop it (does nothing when it is not running)
  serve   run it in the foreground until SIGTERM or SIGINT
          --task-governance: a HyperPod cluster with the task-governance add-on (the provider's
          Kubernetes path refuses to write to it) and the SageMaker API emulator as the add-on's
          stand-in; writes the provider block to DIR/provider.hcl (default DIR `+defaultTaskGovernanceDir+`)
  queues  print, per team, the ClusterQueues and LocalQueues this provider manages in any cluster
          (kubeconfig: --kubeconfig, else $KUBE_CONFIG_PATH, else the one in --dir)
  jobs    the batch/v1 Jobs of --file in any cluster (same kubeconfig): --submit replaces them,
          waits up to --timeout per job for Kueue's decision, prints the decisions and waits until
          the ClusterQueues' status counts them; --delete deletes them and their Workloads;
          without either, print Kueue's current decisions
  check-disposable
          check that the cluster the provider would use (KUBE_CONFIG_PATH, KUBE_CTX, KUBE_HOST, ...)
          carries the marker of the clusters this repository's harness starts, or that
          `+localcluster.EnvDisposableCluster+`=1 says it is disposable; exit 1 otherwise (make demo runs it)`)
}

// checkDisposable is `make demo`'s guard: one GET of the marker, no writes.
func checkDisposable(startedHere bool) error {
	var setByCaller []string
	if startedHere {
		setByCaller = []string{"KUBE_CONFIG_PATH"}
	}
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	verdict, _, _, err := localcluster.CheckDisposableFromEnv(ctx, setByCaller...)
	if err != nil {
		return err
	}
	fmt.Fprintln(os.Stderr, verdict)
	return nil
}

func resolveAssets(flagValue string) (string, error) {
	if flagValue == "" {
		return localcluster.AssetsDirFromEnv()
	}
	abs, err := filepath.Abs(flagValue)
	if err != nil {
		return "", err
	}
	return abs, localcluster.CheckAssets(abs)
}

// up starts `serve` as a detached child (its own session) and waits until the API server
// answers through the kubeconfig it writes.
func up(dir, assetsFlag string, taskGovernance bool) error {
	if pid, args, alive := runningServe(dir); alive {
		if args != nil && servesTaskGovernance(args) != taskGovernance {
			return fmt.Errorf("the localcluster (pid %d) in %s runs %s; stop it with `make cluster-down` (or `localcluster down --dir %s`) first",
				pid, dir, modeName(!taskGovernance), dir)
		}
		// Running, or still starting (another `up`): wait for it either way.
		if err := waitReady(dir, taskGovernance, upTimeout, nil); err != nil {
			return fmt.Errorf("a localcluster (pid %d) runs in %s but its API server does not answer: %w\n"+
				"run `make cluster-down` (or `localcluster down --dir %s`) and try again%s",
				pid, dir, err, dir, logTail(dir))
		}
		fmt.Printf("local control plane already running (pid %d)\n", pid)
		printUsage(dir, taskGovernance)
		return nil
	}

	assets, err := resolveAssets(assetsFlag)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	removeRunFiles(dir)

	self, err := os.Executable()
	if err != nil {
		return err
	}
	logPath := filepath.Join(dir, logFile)
	logf, err := os.OpenFile(logPath, os.O_CREATE|os.O_WRONLY|os.O_TRUNC, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close()
	child := exec.Command(self, serveArgs(dir, assets, taskGovernance)...)
	child.Stdout, child.Stderr = logf, logf
	child.Dir = dir
	// A new session: the cluster outlives this command and ignores the terminal's signals.
	child.SysProcAttr = &syscall.SysProcAttr{Setsid: true}
	fmt.Fprintf(os.Stderr, "localcluster: starting kube-apiserver and etcd from %s (log %s)\n", assets, logPath)
	start := time.Now()
	if err := child.Start(); err != nil {
		return err
	}
	done := make(chan struct{})
	var waitErr error
	go func() { waitErr = child.Wait(); close(done) }()

	if err := waitReady(dir, taskGovernance, upTimeout, done); err != nil {
		select {
		case <-done:
			err = fmt.Errorf("%w (%v)", err, waitErr)
		default: // still starting: stop it rather than leave a half-started cluster behind
			_ = child.Process.Signal(syscall.SIGTERM)
			select {
			case <-done:
			case <-time.After(downTimeout):
				_ = child.Process.Kill()
			}
		}
		return fmt.Errorf("the local control plane did not come up: %w%s", err, logTail(dir))
	}
	fmt.Printf("local control plane is up after %s (pid %d)\n", time.Since(start).Round(100*time.Millisecond), child.Process.Pid)
	printUsage(dir, taskGovernance)
	// Leave the child running: it is in its own session and is reparented when we exit.
	return child.Process.Release()
}

// serveArgs are the arguments of the serve process up starts.
func serveArgs(dir, assets string, taskGovernance bool) []string {
	args := []string{"serve", "--dir", dir, "--assets", assets}
	if taskGovernance {
		args = append(args, "--"+taskGovernanceFlag)
	}
	return args
}

// modeName says how a serve process runs the cluster.
func modeName(taskGovernance bool) string {
	if taskGovernance {
		return "with --" + taskGovernanceFlag + " (the add-on's mark makes the Kubernetes path refuse it)"
	}
	return "without --" + taskGovernanceFlag
}

func printUsage(dir string, taskGovernance bool) {
	kubeconfig := filepath.Join(dir, localcluster.KubeconfigFile)
	if cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig); err == nil {
		fmt.Printf("  API server:  %s\n", cfg.Host)
	}
	fmt.Printf("  kubeconfig:  %s\n  logs:        %s\n\n", kubeconfig, filepath.Join(dir, logFile))
	if taskGovernance {
		printTaskGovernance(dir)
	}
	fmt.Printf("  export KUBE_CONFIG_PATH=%s\n", kubeconfig)
	if _, err := exec.LookPath("kubectl"); err == nil {
		fmt.Printf("  kubectl --kubeconfig %s get nodes -L %s\n", kubeconfig, localcluster.LabelInstanceType)
	}
	fmt.Printf("  make cluster-down   # stop it\n")
}

// waitReady polls until the kubeconfig in dir exists and the API server answers /readyz, and
// with taskGovernance until the provider block is written. It gives up early when exited is
// closed (the server process ended).
func waitReady(dir string, taskGovernance bool, timeout time.Duration, exited <-chan struct{}) error {
	deadline := time.Now().Add(timeout)
	for {
		last := ping(filepath.Join(dir, localcluster.KubeconfigFile))
		if last == nil && taskGovernance {
			_, last = os.Stat(filepath.Join(dir, providerFile))
		}
		if last == nil {
			return nil
		}
		if time.Now().After(deadline) {
			return fmt.Errorf("timed out after %s: %w", timeout, last)
		}
		select {
		case <-exited:
			return errors.New("the server process ended")
		case <-time.After(500 * time.Millisecond):
		}
	}
}

func ping(kubeconfig string) error {
	if _, err := os.Stat(kubeconfig); err != nil {
		return err
	}
	cfg, err := clientcmd.BuildConfigFromFlags("", kubeconfig)
	if err != nil {
		return err
	}
	cfg.Timeout = 3 * time.Second
	cs, err := kubernetes.NewForConfig(cfg)
	if err != nil {
		return err
	}
	ctx, cancel := context.WithTimeout(context.Background(), 3*time.Second)
	defer cancel()
	_, err = cs.Discovery().RESTClient().Get().AbsPath("/readyz").DoRaw(ctx)
	return err
}

// serve runs the cluster until SIGTERM or SIGINT.
func serve(dir, assetsFlag string, taskGovernance bool) error {
	ctx, stop := signal.NotifyContext(context.Background(), syscall.SIGTERM, syscall.SIGINT)
	defer stop()
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return err
	}
	if pid, _, alive := runningServe(dir); alive && pid != os.Getpid() {
		return fmt.Errorf("another localcluster (pid %d) already serves %s", pid, dir)
	}
	pidPath := filepath.Join(dir, pidFile)
	if err := os.WriteFile(pidPath, []byte(strconv.Itoa(os.Getpid())+"\n"), 0o644); err != nil {
		return err
	}
	defer os.Remove(pidPath)

	assets, err := resolveAssets(assetsFlag)
	if err != nil {
		return err
	}
	start := time.Now()
	fmt.Fprintf(os.Stderr, "%s starting the local control plane from %s\n", stamp(), assets)
	cluster, err := localcluster.Start(ctx, localcluster.Options{AssetsDir: assets, WorkDir: dir, Kueue: localcluster.KueueFromEnv()})
	if err != nil {
		return err
	}
	stopAddon := func() {}
	if taskGovernance {
		if stopAddon, err = startTaskGovernance(ctx, dir, cluster.KubeconfigPath); err != nil {
			return errors.Join(err, cluster.Stop())
		}
	}
	fmt.Fprintf(os.Stderr, "%s ready after %s: %s, kubeconfig %s\n", stamp(), time.Since(start).Round(100*time.Millisecond), cluster.Host, cluster.KubeconfigPath)
	<-ctx.Done()
	fmt.Fprintf(os.Stderr, "%s stopping\n", stamp())
	stopAddon()
	if err := cluster.Stop(); err != nil { // also removes the kubeconfig
		return err
	}
	fmt.Fprintf(os.Stderr, "%s stopped\n", stamp())
	return nil
}

func stamp() string { return time.Now().Format(time.RFC3339) }

// down stops the serve process: SIGTERM, then SIGKILL (with the control plane processes
// it started) after 30 s.
func down(dir string) error {
	pid, _, alive := runningServe(dir)
	if !alive {
		fmt.Fprintf(os.Stderr, "localcluster: not running in %s\n", dir)
		removeRunFiles(dir)
		return nil
	}
	fmt.Fprintf(os.Stderr, "localcluster: stopping pid %d\n", pid)
	if err := syscall.Kill(pid, syscall.SIGTERM); err != nil && !errors.Is(err, syscall.ESRCH) {
		return err
	}
	deadline := time.Now().Add(downTimeout)
	for processAlive(pid) && time.Now().Before(deadline) {
		time.Sleep(200 * time.Millisecond)
	}
	if processAlive(pid) {
		fmt.Fprintf(os.Stderr, "localcluster: pid %d still running after %s; killing it and its control plane\n", pid, downTimeout)
		// envtest starts etcd and kube-apiserver in their own process groups: kill them by pid.
		for _, child := range childPIDs(pid) {
			_ = syscall.Kill(child, syscall.SIGKILL)
		}
		_ = syscall.Kill(pid, syscall.SIGKILL)
		for i := 0; i < 50 && processAlive(pid); i++ {
			time.Sleep(100 * time.Millisecond)
		}
	}
	removeRunFiles(dir)
	fmt.Fprintln(os.Stderr, "localcluster: stopped")
	return nil
}

// removeRunFiles removes what a serve process leaves in dir while it runs, so nothing points at a
// cluster that is gone.
func removeRunFiles(dir string) {
	for _, name := range []string{pidFile, localcluster.KubeconfigFile, providerFile} {
		_ = os.Remove(filepath.Join(dir, name))
	}
}

// runningServe reads the pid file and reports whether that process is alive and is a
// localcluster serve process (not a recycled pid), with its command line args when /proc has them.
func runningServe(dir string) (pid int, args []string, alive bool) {
	data, err := os.ReadFile(filepath.Join(dir, pidFile))
	if err != nil {
		return 0, nil, false
	}
	pid, err = strconv.Atoi(strings.TrimSpace(string(data)))
	if err != nil || pid <= 0 {
		return 0, nil, false
	}
	if !processAlive(pid) {
		return pid, nil, false
	}
	if cmdline, err := os.ReadFile(fmt.Sprintf("/proc/%d/cmdline", pid)); err == nil {
		args = strings.Split(strings.TrimSuffix(string(cmdline), "\x00"), "\x00")
		if len(args) < 2 || args[1] != "serve" {
			return pid, nil, false
		}
	}
	return pid, args, true
}

func processAlive(pid int) bool {
	err := syscall.Kill(pid, 0)
	if err != nil && !errors.Is(err, syscall.EPERM) {
		return false
	}
	// A zombie is not alive for our purposes.
	if stat, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid)); err == nil {
		if f := procStatFields(string(stat)); len(f) > 0 && f[0] == "Z" {
			return false
		}
	}
	return true
}

// procStatFields returns the fields of /proc/<pid>/stat after the command name
// (state, ppid, ...).
func procStatFields(stat string) []string {
	i := strings.LastIndexByte(stat, ')')
	if i < 0 {
		return nil
	}
	return strings.Fields(stat[i+1:])
}

// childPIDs lists the direct children of pid (Linux /proc; empty elsewhere).
func childPIDs(pid int) []int {
	entries, err := os.ReadDir("/proc")
	if err != nil {
		return nil
	}
	var out []int
	for _, e := range entries {
		child, err := strconv.Atoi(e.Name())
		if err != nil {
			continue
		}
		stat, err := os.ReadFile(filepath.Join("/proc", e.Name(), "stat"))
		if err != nil {
			continue
		}
		if f := procStatFields(string(stat)); len(f) > 1 && f[1] == strconv.Itoa(pid) {
			out = append(out, child)
		}
	}
	return out
}

func logTail(dir string) string {
	path := filepath.Join(dir, logFile)
	tail := localcluster.TailFile(path, 30)
	if tail == "" {
		return ""
	}
	return fmt.Sprintf("\n--- last lines of %s ---\n%s", path, tail)
}
