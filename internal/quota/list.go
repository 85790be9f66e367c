package quota

import (
	"fmt"
	"slices"
	"strings"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// ListFilter is what a list of teams' quotas or namespaces (`terraform query`) selects; an empty
// field selects every team.
type ListFilter struct {
	// TeamPrefix selects the teams whose name starts with it.
	TeamPrefix string
	// Cohort selects the quotas of a cohort, and the namespaces of their teams.
	Cohort string
	// InstanceType selects the quotas with a resources entry of the instance type, and the
	// namespaces of their teams.
	InstanceType string
}

// SelectsTeam reports whether the team passes the team prefix.
func (f ListFilter) SelectsTeam(team string) bool {
	return strings.HasPrefix(team, f.TeamPrefix)
}

// ByQuota reports whether the filter selects on what only a team's quota says (cohort, instance
// type): a namespace is then selected by its team's quota.
func (f ListFilter) ByQuota() bool { return f.Cohort != "" || f.InstanceType != "" }

// SelectsQuota reports whether the filter selects the quota of team in cohort whose resources
// entries are of instanceTypes.
func (f ListFilter) SelectsQuota(team, cohort string, instanceTypes []string) bool {
	return f.SelectsTeam(team) && (f.Cohort == "" || f.Cohort == cohort) &&
		(f.InstanceType == "" || slices.Contains(instanceTypes, f.InstanceType))
}

// TeamFromNamespaceName returns the team of a Namespace named by NamespaceName; ok is false for
// any other name, and for one whose team breaks TeamRule.
func TeamFromNamespaceName(name string) (team string, ok bool) {
	t, found := strings.CutPrefix(name, nsPrefix)
	return t, found && ValidTeam(t)
}

// PriorityClassOfObjectName returns the class of a WorkloadPriorityClass named by
// PriorityClassObjectName; ok is false for any other name.
func PriorityClassOfObjectName(name string) (class string, ok bool) {
	c, found := strings.CutSuffix(name, priorityClassSuffix)
	return c, found && c != ""
}

// LocalQueueNotRepresented lists what an apply of the team's namespace would change in lq, the
// LocalQueue in it (nil when there is none), beyond taking it over: one that feeds another
// ClusterQueue is deleted and created again feeding the team's (spec.clusterQueue cannot be
// changed), and the workloads queued in it lose their queue.
func LocalQueueNotRepresented(team string, lq *kueue.LocalQueue) []string {
	if lq == nil || lq.Spec.ClusterQueue == ClusterQueueName(team) {
		return nil
	}
	return []string{fmt.Sprintf("LocalQueue %q feeds ClusterQueue %q: an apply deletes it and creates it again "+
		"feeding %q, and the workloads queued in it lose their queue", lq.Name, lq.Spec.ClusterQueue, ClusterQueueName(team))}
}
