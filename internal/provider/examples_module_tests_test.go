package provider

import (
	"bufio"
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"runtime"
	"strings"
	"testing"
	"time"

	"github.com/hashicorp/hcl/v2"
	"github.com/hashicorp/hcl/v2/hclsyntax"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
)

// The test suites of examples/modules/hyperpod-team (tests/*.tftest.hcl), run by `terraform test`
// as the module's users run them. The provider is built from this tree into a filesystem mirror,
// the only installation source of the CLI configuration the test writes: `terraform init`
// installs this build, and nothing is downloaded. HOME is empty, so no earlier `make install` and
// no ~/.terraformrc take part.
//
//   - offline: plans against an unreachable host, with every KUBE_* variable removed.
//   - cluster: applies to the acceptance tests' cluster (KUBE_CONFIG_PATH, as TestMain set it),
//     and its helper module submits a job with kubectl, which must be on PATH.
//
// A suite passes when terraform test reports every run block of the file passed; the cluster
// suite must also leave neither the team's ClusterQueue nor its namespace behind.

const (
	teamModuleDir   = examplesDir + "/" + teamModuleSource
	teamModuleTests = "tests"
)

func TestAccExamples_hyperpodTeamModuleTests(t *testing.T) {
	acctest.RequireKueue(t)
	t.Parallel()
	if _, err := exec.LookPath("kubectl"); err != nil {
		t.Fatal("the module's cluster suite submits its job with kubectl: put kubectl on PATH")
	}
	terraform := terraformCLI(t)
	cliConfig := providerMirror(t)

	for _, suite := range []string{"offline", "cluster"} {
		t.Run(suite, func(t *testing.T) {
			t.Parallel()
			file := teamModuleTests + "/" + suite + ".tftest.hcl"
			env := moduleTestEnv(t, cliConfig, suite == "cluster")
			if suite == "cluster" {
				team := suiteVariable(t, filepath.Join(teamModuleDir, file), "team")
				e2eCleanup(t, team)
				t.Cleanup(func() {
					if t.Failed() {
						return // e2eCleanup's cleanups, which run next, remove what a failed suite left
					}
					if err := checkQueueGone(t, team)(nil); err != nil {
						t.Errorf("after the suite's teardown: %v", err)
					}
					if err := tnsCheckGone(team)(nil); err != nil {
						t.Errorf("after the suite's teardown: %v", err)
					}
				})
			}
			dir := copyTree(t, teamModuleDir)
			runTerraform(t, terraform, dir, env, 2*time.Minute, "init", "-input=false", "-no-color")
			out := runTerraform(t, terraform, dir, env, 5*time.Minute, "test", "-json", "-filter="+file)
			if err := checkTestReport(out, file); err != nil {
				t.Errorf("terraform test -filter=%s: %v\n%s", file, err, humanReport(out))
			}
		})
	}
}

// terraformCLI is the CLI the acceptance tests use: TF_ACC_TERRAFORM_PATH, else terraform on PATH.
func terraformCLI(t *testing.T) string {
	t.Helper()
	if bin := os.Getenv("TF_ACC_TERRAFORM_PATH"); bin != "" {
		return bin
	}
	bin, err := exec.LookPath("terraform")
	if err != nil {
		t.Fatal("no terraform CLI: set TF_ACC_TERRAFORM_PATH or put terraform on PATH")
	}
	return bin
}

// providerMirror builds the provider from this tree, as version CHANGELOG.md names (what
// `make install` builds), into a filesystem mirror, and returns a CLI configuration whose only
// installation source is that mirror.
func providerMirror(t *testing.T) string {
	t.Helper()
	version := changelogVersion(t)
	host := strings.TrimSuffix(os.Getenv("TF_ACC_PROVIDER_HOST"), "/")
	if host == "" {
		host = "registry.terraform.io"
	}
	mirror := t.TempDir()
	bin := filepath.Join(mirror, host, "quotaworks", "hyperpod", version, runtime.GOOS+"_"+runtime.GOARCH,
		"terraform-provider-hyperpod_v"+version)
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Minute)
	defer cancel()
	build := exec.CommandContext(ctx, "go", "build", "-ldflags", "-X main.version="+version, "-o", bin, ".")
	build.Dir = "../.."
	// The module cache holds what the test binary was built from; a build must not fetch more.
	build.Env = append(os.Environ(), "GOPROXY=off")
	if out, err := build.CombinedOutput(); err != nil {
		t.Fatalf("building the provider: %v\n%s", err, out)
	}
	config := filepath.Join(t.TempDir(), "terraformrc")
	content := fmt.Sprintf("provider_installation {\n  filesystem_mirror {\n    path    = %q\n    include = [%q]\n  }\n}\n",
		mirror, host+"/quotaworks/hyperpod")
	if err := os.WriteFile(config, []byte(content), 0o644); err != nil {
		t.Fatal(err)
	}
	return config
}

// changelogVersion is the version of the top heading of CHANGELOG.md, "## X.Y.Z ...".
func changelogVersion(t *testing.T) string {
	t.Helper()
	raw, err := os.ReadFile("../../CHANGELOG.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(raw), "\n") {
		if v, ok := strings.CutPrefix(line, "## "); ok {
			v, _, _ = strings.Cut(v, " ")
			if strings.Count(v, ".") == 2 {
				return v
			}
		}
	}
	t.Fatal("CHANGELOG.md has no '## X.Y.Z' heading")
	return ""
}

// moduleTestEnv is the CLI's environment: PATH (terraform's shell and kubectl), a fresh HOME,
// the CLI configuration, and the KUBE_* variables only when the suite uses the cluster.
func moduleTestEnv(t *testing.T, cliConfig string, withCluster bool) []string {
	env := []string{
		"HOME=" + t.TempDir(), "TF_CLI_CONFIG_FILE=" + cliConfig, "TF_IN_AUTOMATION=1", "CHECKPOINT_DISABLE=1",
	}
	for _, kv := range os.Environ() {
		name, _, _ := strings.Cut(kv, "=")
		switch {
		case name == "PATH", name == "TMPDIR", name == "TF_LOG", name == "TF_LOG_PATH":
			env = append(env, kv)
		case strings.HasPrefix(name, "KUBE_") && withCluster:
			env = append(env, kv)
		}
	}
	return env
}

// suiteVariable is the string value of a file-level `variables` attribute of a test file.
func suiteVariable(t *testing.T, path, name string) string {
	t.Helper()
	src, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	file, diags := hclsyntax.ParseConfig(src, path, hcl.InitialPos)
	if diags.HasErrors() {
		t.Fatal(diags)
	}
	for _, block := range file.Body.(*hclsyntax.Body).Blocks {
		if attr, ok := block.Body.Attributes[name]; ok && block.Type == "variables" {
			v, diags := attr.Expr.Value(nil)
			if diags.HasErrors() {
				t.Fatal(diags)
			}
			return v.AsString()
		}
	}
	t.Fatalf("%s sets no variable %s", path, name)
	return ""
}

// copyTree copies a directory with its subdirectories into a temporary one, leaving out what a
// local `terraform init` may have left in it (.terraform, .terraform.lock.hcl).
func copyTree(t *testing.T, src string) string {
	t.Helper()
	dst := t.TempDir()
	err := filepath.WalkDir(src, func(path string, d os.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(src, path)
		if err != nil {
			return err
		}
		if strings.HasPrefix(d.Name(), ".") && rel != "." {
			if d.IsDir() {
				return filepath.SkipDir
			}
			return nil
		}
		if d.IsDir() {
			return os.MkdirAll(filepath.Join(dst, rel), 0o755)
		}
		raw, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(filepath.Join(dst, rel), raw, 0o644)
	})
	if err != nil {
		t.Fatal(err)
	}
	return dst
}

// runTerraform runs the CLI in dir and returns its stdout; the command must exit 0.
func runTerraform(t *testing.T, bin, dir string, env []string, timeout time.Duration, args ...string) []byte {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), timeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, bin, args...)
	cmd.Dir, cmd.Env = dir, env
	var stdout, stderr bytes.Buffer
	cmd.Stdout, cmd.Stderr = &stdout, &stderr
	err := cmd.Run()
	var exit *exec.ExitError
	switch {
	case ctx.Err() != nil:
		t.Fatalf("terraform %s did not finish within %s\n%s\n%s", strings.Join(args, " "), timeout, humanReport(stdout.Bytes()), stderr.String())
	case errors.As(err, &exit):
		t.Fatalf("terraform %s: exit %d\n%s\n%s", strings.Join(args, " "), exit.ExitCode(), humanReport(stdout.Bytes()), stderr.String())
	case err != nil:
		t.Fatalf("terraform %s: %v", strings.Join(args, " "), err)
	}
	return stdout.Bytes()
}

// testMessage is one line of `terraform test -json`.
type testMessage struct {
	Message  string              `json:"@message"`
	Type     string              `json:"type"`
	Abstract map[string][]string `json:"test_abstract"`
	Run      struct {
		Run      string `json:"run"`
		Progress string `json:"progress"`
		Status   string `json:"status"`
	} `json:"test_run"`
	Summary struct {
		Status                           string
		Passed, Failed, Errored, Skipped int
	} `json:"test_summary"`
	Diagnostic *struct {
		Detail string `json:"detail"`
	} `json:"diagnostic"`
}

// checkTestReport checks the JSON report of `terraform test -filter=file`: the file was found,
// with run blocks, and every one of them passed.
func checkTestReport(out []byte, file string) error {
	var runs []string
	passed := map[string]bool{}
	summary := false
	scanner := bufio.NewScanner(bytes.NewReader(out))
	scanner.Buffer(nil, 1<<20)
	for scanner.Scan() {
		var m testMessage
		if err := json.Unmarshal(scanner.Bytes(), &m); err != nil {
			return fmt.Errorf("not a line of terraform test -json: %q: %w", scanner.Text(), err)
		}
		switch m.Type {
		case "test_abstract":
			runs = m.Abstract[file]
		case "test_run":
			// Terraform reports a run's status when its progress is "complete"; OpenTofu reports
			// no progress.
			if m.Run.Status == "pass" && (m.Run.Progress == "complete" || m.Run.Progress == "") {
				passed[m.Run.Run] = true
			}
		case "test_summary":
			summary = true
			s := m.Summary
			if s.Status != "pass" || s.Failed+s.Errored+s.Skipped > 0 || s.Passed != len(runs) {
				return fmt.Errorf("summary %+v, want all %d run blocks passed", s, len(runs))
			}
		}
	}
	if err := scanner.Err(); err != nil {
		return err
	}
	if len(runs) == 0 {
		return fmt.Errorf("no run blocks found in %s", file)
	}
	for _, r := range runs {
		if !passed[r] {
			return fmt.Errorf("run %q did not pass", r)
		}
	}
	if !summary {
		return errors.New("no summary")
	}
	return nil
}

// humanReport is the text of a JSON report: each message, with a diagnostic's detail.
func humanReport(out []byte) string {
	var b strings.Builder
	for _, line := range bytes.Split(out, []byte("\n")) {
		var m testMessage
		if json.Unmarshal(line, &m) != nil {
			b.Write(line)
			b.WriteByte('\n')
			continue
		}
		b.WriteString(m.Message + "\n")
		if m.Diagnostic != nil && m.Diagnostic.Detail != "" {
			b.WriteString("    " + strings.ReplaceAll(m.Diagnostic.Detail, "\n", "\n    ") + "\n")
		}
	}
	return b.String()
}
