package provider

// Applies that stop halfway, with the API server gone or terraform interrupted: what they say
// about each resource, and the state they leave for the next apply.

import (
	"fmt"
	"os"
	"regexp"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/acctest"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/faultproxy"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

var iaAddrIndex = regexp.MustCompile(`^(hyperpod_team_namespace|hyperpod_compute_quota)\.team\[(\d+)\]$`)

// iaAddrTeam returns the type and team of an address like hyperpod_compute_quota.team[7].
func iaAddrTeam(prefix, addr string) (kind, team string, ok bool) {
	m := iaAddrIndex.FindStringSubmatch(addr)
	if m == nil {
		return "", "", false
	}
	return m[1], prefix + "-" + m[2], true
}

// iaOutage is what the apply during the outage did to one resource address.
type iaOutage struct {
	errs     []tfDiagnostic
	complete bool // apply_complete in the UI stream
}

func (o iaOutage) text() string {
	var b strings.Builder
	for _, d := range o.errs {
		b.WriteString(d.Summary + "\n" + d.Detail + "\n")
	}
	return b.String()
}

var iaTriedTimes = regexp.MustCompile(`tried \d+ times?`)

// iaUnwrap joins the lines of a diagnostic text (Terraform does not wrap -json output, but
// the provider's details may hold newlines).
func iaUnwrap(s string) string { return strings.Join(strings.Fields(s), " ") }

// iaOutcomes gathers what an apply -json said, by resource address: its errors and whether it
// completed. Errors without an address (terraform's own) are returned apart.
func iaOutcomes(r tfResult) (outcome map[string]*iaOutage, unaddressed []tfDiagnostic) {
	diags, completed := parseTFJSONLines(r.stdout)
	outcome = map[string]*iaOutage{}
	at := func(addr string) *iaOutage {
		if outcome[addr] == nil {
			outcome[addr] = &iaOutage{}
		}
		return outcome[addr]
	}
	for _, d := range diags {
		if d.Severity != "error" {
			continue
		}
		if d.Address == "" {
			unaddressed = append(unaddressed, d)
			continue
		}
		at(d.Address).errs = append(at(d.Address).errs, d)
	}
	for addr := range completed {
		at(addr).complete = true
	}
	return outcome, unaddressed
}

// iaUncertain lists the addresses the provider reported "may have been created".
func iaUncertain(outcome map[string]*iaOutage) []string {
	var uncertain []string
	for addr, o := range outcome {
		if slices.ContainsFunc(o.errs, func(d tfDiagnostic) bool { return strings.Contains(d.Summary, "may have been created") }) {
			uncertain = append(uncertain, addr)
		}
	}
	return uncertain
}

// iaTally counts the outcomes iaCheckOutcomes found.
type iaTally struct {
	created, partial, maybe, notCreated int
	summary                             []string
	examples                            map[string]string // one full text per outcome, for the log
}

func (c iaTally) logExamples(t *testing.T) {
	t.Helper()
	for _, k := range sortedKeys(c.examples) {
		t.Logf("example, %s: %s", k, c.examples[k])
	}
}

// iaCheckOutcomes checks, address by address, what an interrupted apply reported against the
// state it saved: a completed resource has no errors and is saved untainted; one that may have
// been created (uncertain) names its first object and is saved tainted; one partly created
// (partly) carries the resource's "partly created" diagnostic, says what was and was not
// written and is saved tainted; one not created says so and is not in state. An address that
// neither completed nor failed was not attempted. failed, when not nil, runs on the errors of
// every address that failed.
func iaCheckOutcomes(t *testing.T, prefix string, outcome map[string]*iaOutage, state map[string]tfStateResource,
	uncertain []string, partly func(kind string, o *iaOutage) bool, failed func(addr, text string)) iaTally {
	t.Helper()
	c := iaTally{examples: map[string]string{}}
	for _, addr := range sortedKeys(outcome) {
		o := outcome[addr]
		kind, team, ok := iaAddrTeam(prefix, addr)
		if !ok {
			t.Errorf("unexpected address %s", addr)
			continue
		}
		res, inState := state[addr]
		if o.complete {
			c.created++
			c.summary = append(c.summary, addr+": created")
			if len(o.errs) > 0 || !inState || res.Tainted {
				t.Errorf("%s completed, but has %d errors, in state %v, tainted %v", addr, len(o.errs), inState, res.Tainted)
			}
			continue
		}
		if len(o.errs) == 0 {
			continue // not attempted: its namespace failed
		}
		text := o.text()
		firstKind, firstName := "Namespace", quota.NamespaceName(team)
		if kind == iaQuotaType {
			firstKind, firstName = "ClusterQueue", quota.ClusterQueueName(team)
		}
		partSummary := kind + " partly created"
		switch {
		case slices.Contains(uncertain, addr):
			// Saved tainted, so that the object, if the server made it, has a state.
			c.examples[kind+" may have been created"] = addr + ":\n" + text
			c.maybe++
			c.summary = append(c.summary, addr+": may have been created (tainted)")
			if !strings.Contains(text, fmt.Sprintf("%s %q", firstKind, firstName)) {
				t.Errorf("%s: diagnostics do not name %s %q:\n%s", addr, firstKind, firstName, text)
			}
			if !inState || !res.Tainted {
				t.Errorf("%s may have been created, but in state: %v, tainted: %v", addr, inState, res.Tainted)
			}
		case partly(kind, o):
			c.examples[partSummary] = addr + ":\n" + text
			c.partial++
			c.summary = append(c.summary, addr+": partly created (tainted)")
			if !slices.ContainsFunc(o.errs, func(d tfDiagnostic) bool { return d.Summary == partSummary }) {
				t.Errorf("%s: no %q diagnostic:\n%s", addr, partSummary, text)
			}
			if want := fmt.Sprintf("Written: %s %q", firstKind, firstName); !strings.Contains(iaUnwrap(text), want) {
				t.Errorf("%s: diagnostics do not say %s:\n%s", addr, want, text)
			}
			if !strings.Contains(iaUnwrap(text), "Not written: ") {
				t.Errorf("%s: diagnostics do not name what was not written:\n%s", addr, text)
			}
			if !inState || !res.Tainted {
				t.Errorf("%s was partly created, but in state: %v, tainted: %v", addr, inState, res.Tainted)
			}
		default:
			c.examples[kind+" not created"] = addr + ":\n" + text
			c.notCreated++
			c.summary = append(c.summary, addr+": not created")
			if !strings.Contains(iaUnwrap(text), "was not created") {
				t.Errorf("%s: its error does not say the object was not created:\n%s", addr, text)
			}
			if inState {
				t.Errorf("%s wrote nothing, but is in state (tainted: %v)", addr, res.Tainted)
			}
		}
		if failed != nil {
			failed(addr, text)
		}
	}
	return c
}

// TestAccInterruptedApply_apiServerGone takes the API server away (faultproxy.Down) while
// twenty teams are being created. The apply must fail in bounded time with diagnostics that name
// what was and was not written; the state must then hold exactly what exists (tainted resources
// included); and once the server is back, a second apply must converge with an empty plan after
// it.
func TestAccInterruptedApply_apiServerGone(t *testing.T) {
	acctest.RequireCluster(t)
	prefix := iaPrefix("ig")
	iaCleanup(t, prefix)
	proxy, kubeconfig := acctest.FaultProxy(t, faultproxy.Config{Seed: 1})
	cli := newTFCLI(t)
	// A short retry budget keeps the outage's failures quick.
	cli.writeConfig(iaConfig(prefix, fmt.Sprintf(`  config_path = %q
  retry {
    max_attempts = 3
    max_elapsed  = "5s"
  }`, kubeconfig)))
	cli.init()

	apply, atDown, wentDown := iaApplyUntil(t, cli, prefix, iaTeams/2, "cut off from the API server",
		func(*tfProcess) error { proxy.Down(); return nil })
	failed := apply.wait()
	t.Logf("API server gone with %d ClusterQueues of %d; apply exited %d %s later (%s in all)",
		atDown, iaTeams, failed.exitCode, time.Since(wentDown).Round(time.Millisecond), failed.took.Round(time.Millisecond))
	if atDown >= iaTeams {
		t.Fatalf("all %d ClusterQueues existed when the API server went away: the outage was not halfway", atDown)
	}
	if failed.exitCode == 0 {
		t.Fatalf("apply succeeded although the API server went away halfway:\n%s", failed)
	}

	// What the apply said, by address.
	outcome, unaddressed := iaOutcomes(failed)
	for _, d := range unaddressed {
		t.Errorf("error without a resource address: %s: %s", d.Summary, d.Detail)
	}

	// Still while the server is away: the state, read against the cluster directly.
	state := cli.show()
	cl := iaList(t, prefix)
	uncertain := iaUncertain(outcome)
	for _, p := range iaCompare(state, cl, uncertain...) {
		t.Errorf("while the API server is away: %s", p)
	}

	// Any summary naming a partial create counts as one, and must be the resource's own.
	partly := func(_ string, o *iaOutage) bool {
		return slices.ContainsFunc(o.errs, func(d tfDiagnostic) bool { return strings.Contains(d.Summary, "partly created") })
	}
	tally := iaCheckOutcomes(t, prefix, outcome, state, uncertain, partly, func(addr, text string) {
		// Every failure here is the outage's: transient, retried, safe to apply again.
		if !iaTriedTimes.MatchString(text) || !strings.Contains(text, "Running apply again is safe") {
			t.Errorf("%s: the error does not say how often it was tried and that running apply again is safe:\n%s", addr, text)
		}
		if strings.Contains(text, "credentials") {
			t.Errorf("%s: a transient error carries a permission hint:\n%s", addr, text)
		}
	})
	for addr, r := range state {
		if o := outcome[addr]; o == nil || (!o.complete && !r.Tainted) {
			t.Errorf("%s is in state (tainted: %v) but the apply neither completed it nor reported it partly created", addr, r.Tainted)
		}
	}
	t.Logf("during the outage: %d created, %d partly created, %d not created, the rest not attempted:\n  %s",
		tally.created, tally.partial+tally.maybe, tally.notCreated, strings.Join(tally.summary, "\n  "))
	tally.logExamples(t)
	if failedCount := tally.partial + tally.maybe + tally.notCreated; tally.created == 0 || failedCount == 0 {
		t.Errorf("the outage did not split the apply: %d created, %d failed", tally.created, failedCount)
	}
	if t.Failed() {
		iaLogDiagnostics(t, failed)
		t.FailNow()
	}

	if err := proxy.Up(); err != nil {
		t.Fatalf("bringing the API server back: %v", err)
	}
	second := cli.apply(10 * time.Minute)
	t.Logf("apply after the outage: exit %d in %s", second.exitCode, second.took.Round(time.Millisecond))
	if second.exitCode != 0 {
		iaLogDiagnostics(t, second)
		t.Fatalf("apply after the outage did not converge (exit %d); its diagnostics are above", second.exitCode)
	}
	iaRequireConverged(t, cli, prefix)
	t.Logf("proxy:\n%s", proxy.Stats())
	iaDestroy(t, cli, prefix)
}

// iaInterrupt sends SIGINT to the CLI, as Ctrl-C does: terraform asks the provider to stop
// (StopProvider), waits for the operations in flight, saves the state they return and exits.
func iaInterrupt(p *tfProcess) error {
	return p.cmd.Process.Signal(os.Interrupt)
}

// TestAccInterruptedApply_interruptedTerraform interrupts terraform (SIGINT) while it creates
// twenty teams. The provider is asked to stop, which cancels the creates in flight: what a
// cut-off create wrote comes back "partly created" or "may have been created", which Terraform
// saves tainted before it exits by itself. Right after, the state must hold exactly what exists,
// with no object left without state and nothing tainted that the provider did not report; a
// second apply must converge with an empty plan after it.
func TestAccInterruptedApply_interruptedTerraform(t *testing.T) {
	acctest.RequireCluster(t)
	prefix := iaPrefix("ii")
	iaCleanup(t, prefix)
	proxy, kubeconfig := iaLatencyProxy(t)
	cli := newTFCLI(t)
	cli.writeConfig(iaConfig(prefix, fmt.Sprintf("  config_path = %q", kubeconfig)))
	cli.init()

	apply, atInterrupt, interruptedAt := iaApplyUntil(t, cli, prefix, 5, "interrupted", iaInterrupt)
	// The provider's applies have ended when wait returns (see tfProcess.wait).
	interrupted := apply.wait()
	exitedAfter := apply.started.Add(interrupted.took).Sub(interruptedAt)
	t.Logf("interrupted terraform with %d ClusterQueues of %d; it exited %d %s later (%s in all)",
		atInterrupt, iaTeams, interrupted.exitCode, exitedAfter.Round(time.Millisecond), interrupted.took.Round(time.Millisecond))
	if interrupted.killed || interrupted.timedOut || interrupted.exitCode == -1 {
		t.Fatalf("terraform did not exit by itself after the interrupt:\n%s", interrupted)
	}
	if atInterrupt >= iaTeams {
		t.Fatalf("all %d ClusterQueues existed when terraform was interrupted: the interrupt was not halfway", atInterrupt)
	}
	if interrupted.exitCode == 0 {
		t.Fatalf("apply succeeded although it was interrupted halfway:\n%s", interrupted)
	}

	// What the apply said, by address.
	outcome, unaddressed := iaOutcomes(interrupted)
	own := map[string]int{} // terraform's own errors, without an address ("execution halted")
	for _, d := range unaddressed {
		own[strings.TrimSpace(d.Summary+": "+d.Detail)]++
	}
	for _, e := range sortedKeys(own) {
		t.Logf("terraform's own error, %d times: %s", own[e], e)
	}

	state := cli.show()
	cl := iaList(t, prefix)
	uncertain := iaUncertain(outcome)
	for _, p := range iaCompare(state, cl, uncertain...) {
		t.Errorf("after the interrupt: %s", p)
	}

	// Only the resource's own summary counts as a partial create.
	partly := func(kind string, o *iaOutage) bool {
		return slices.ContainsFunc(o.errs, func(d tfDiagnostic) bool { return d.Summary == kind+" partly created" })
	}
	// Nothing in the provider outlasts the cancellation: each create in flight ends on the stop,
	// as soon as its request is cut off, and none runs on to its timeout (a context deadline).
	endedOnTheStop := func(addr, text string) {
		if strings.Contains(text, "deadline exceeded") {
			t.Errorf("%s ran on to its timeout instead of ending on the interrupt:\n%s", addr, text)
		}
	}
	tally := iaCheckOutcomes(t, prefix, outcome, state, uncertain, partly, endedOnTheStop)
	// Tainted only what the provider reported partly created or maybe created; untainted only
	// what completed.
	for addr, r := range state {
		o := outcome[addr]
		switch {
		case r.Tainted && (o == nil || (!slices.Contains(uncertain, addr) &&
			!slices.ContainsFunc(o.errs, func(d tfDiagnostic) bool { return strings.HasSuffix(d.Summary, " partly created") }))):
			t.Errorf("%s is tainted in state, but the apply reported it neither partly created nor maybe created", addr)
		case !r.Tainted && (o == nil || !o.complete):
			t.Errorf("%s is in state, not tainted, but the apply did not complete it", addr)
		}
	}
	t.Logf("after the interrupt: %d created, %d partly created, %d may have been created, %d not created, "+
		"the rest not attempted; the cluster held %s and the state %d resources:\n  %s",
		tally.created, tally.partial, tally.maybe, tally.notCreated, cl, len(state), strings.Join(tally.summary, "\n  "))
	tally.logExamples(t)
	// Terraform waits for the creates in flight; had the provider not cancelled them on
	// StopProvider, they would all have completed and none would have been cut off.
	if cutOff := tally.partial + tally.maybe + tally.notCreated; tally.created == 0 || cutOff == 0 {
		t.Errorf("the interrupt cut off no create: %d created, %d cut off", tally.created, cutOff)
	}
	if t.Failed() {
		iaLogDiagnostics(t, interrupted)
		t.FailNow()
	}

	second := cli.apply(10 * time.Minute)
	t.Logf("apply after the interrupt: exit %d in %s", second.exitCode, second.took.Round(time.Millisecond))
	if second.exitCode != 0 {
		iaLogDiagnostics(t, second)
		t.Fatalf("apply after the interrupt did not converge (exit %d); its diagnostics are above", second.exitCode)
	}
	iaRequireConverged(t, cli, prefix)
	t.Logf("proxy:\n%s", proxy.Stats())
	iaDestroy(t, cli, prefix)
}
