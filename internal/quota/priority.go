package quota

import (
	"fmt"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/kueue"
)

// The cluster scheduler config's priority classes: HyperPod's cluster policy names up to ten
// classes {Name, Weight 0-100}, and each is a Kueue WorkloadPriorityClass "<name>-priority"
// whose value is the weight. Jobs take a class with the label kueue.x-k8s.io/priority-class.

// PriorityClass is one configured class. Name is "" when not yet known (plan time).
type PriorityClass struct {
	Name   string
	Weight int64
}

// SchedulerPolicy is a cluster's scheduling policy as the SageMaker API holds it in one
// cluster scheduler config. FairShare and IdleResourceSharing are "Enabled" or "Disabled", ""
// where the store has no such switch (a cluster's own Kueue sets fair sharing in its manager
// configuration, not in an object).
type SchedulerPolicy struct {
	PriorityClasses     []PriorityClass
	FairShare           string
	IdleResourceSharing string
	// Tags are the tags the config carries (tags_all); nil when none.
	Tags map[string]string
}

// DefaultFairShare is the SageMaker API's documented default of FairShare.
const DefaultFairShare = "Enabled"

// SchedulerConfigName is the name this provider gives a cluster scheduler config it creates.
const SchedulerConfigName = "hyperpod-scheduler-config"

// PriorityClassObjectName is the WorkloadPriorityClass of a class, "<name>-priority": what jobs
// name in the label kueue.x-k8s.io/priority-class.
func PriorityClassObjectName(name string) string { return name + priorityClassSuffix }

// ValidatePriorityClasses checks a list of classes as a whole: at most MaxPriorityClasses,
// names valid and unique, weights in range. Classes with an unknown name (Name "") are skipped
// by the name checks. Problems carry Entry -1 and the path {"priority_classes", i, attribute}.
func ValidatePriorityClasses(classes []PriorityClass) []Problem {
	var out []Problem
	at := func(i int, attr string) []string {
		return []string{"priority_classes", fmt.Sprint(i), attr}
	}
	if len(classes) > MaxPriorityClasses {
		out = append(out, Problem{Entry: -1, Path: []string{"priority_classes"}, Summary: "Too many priority classes",
			Detail: fmt.Sprintf("HyperPod's cluster policy holds at most %d priority classes; got %d. Merge classes "+
				"that share a weight.", MaxPriorityClasses, len(classes))})
	}
	first := map[string]int{}
	for i, c := range classes {
		if c.Weight < 0 || c.Weight > MaxPriorityWeight {
			out = append(out, Problem{Entry: -1, Path: at(i, "weight"), Summary: "Priority weight out of range",
				Detail: fmt.Sprintf("weight must be 0-%d (higher is admitted first and may preempt lower); got %d.",
					MaxPriorityWeight, c.Weight)})
		}
		if c.Name == "" {
			continue
		}
		if !validPriorityClassName(c.Name) {
			out = append(out, Problem{Entry: -1, Path: at(i, "name"), Summary: "Invalid priority class name",
				Detail: fmt.Sprintf("The name %s; got %q.", PriorityClassRule, c.Name)})
			continue
		}
		if j, seen := first[c.Name]; seen {
			out = append(out, Problem{Entry: -1, Path: at(i, "name"), Summary: "Duplicate priority class",
				Detail: fmt.Sprintf("priority class %q is already declared at priority_classes[%d]; each name is one "+
					"WorkloadPriorityClass, so it can appear once.", c.Name, j)})
			continue
		}
		first[c.Name] = i
	}
	return out
}

// RenderPriorityClass is a class's WorkloadPriorityClass as the provider applies it: value =
// weight, the managed-by label and, when owner is not empty, the owner annotation.
func RenderPriorityClass(c PriorityClass, owner string) kueue.WorkloadPriorityClass {
	wpc := kueue.WorkloadPriorityClass{
		TypeMeta: kueue.TypeMeta(kueue.KindWorkloadPriorityClass),
		ObjectMeta: metav1.ObjectMeta{Name: PriorityClassObjectName(c.Name),
			Labels: map[string]string{LabelManagedBy: ManagedByValue}},
		Value: int32(c.Weight),
	}
	if owner != "" {
		wpc.Annotations = map[string]string{AnnotationOwner: owner}
	}
	return wpc
}

// PriorityClassDrift lists how a WorkloadPriorityClass's metadata differs from what the
// provider writes (its value is an attribute, weight, so it is not listed here).
func PriorityClassDrift(name, owner string, got metav1.ObjectMeta) []string {
	want := RenderPriorityClass(PriorityClass{Name: name}, owner)
	var out []string
	for _, d := range MetadataDrift(want.ObjectMeta, got) {
		out = append(out, fmt.Sprintf("WorkloadPriorityClass %q %s", want.Name, d))
	}
	return out
}
