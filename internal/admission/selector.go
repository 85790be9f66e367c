package admission

import (
	"slices"

	corev1 "k8s.io/api/core/v1"
)

// flavorMatches is Kueue's check of a pod set's node selector and required node affinity
// against a flavor's node labels, restricted, as Kueue does, to the label keys the flavor has.
// A flavor not given in Cluster.ResourceFlavors is taken to have no labels: it matches any pod set.
func (s *state) flavorMatches(flavor string, ps *podSet) bool {
	labels := s.flavorLabels[flavor]
	for k, v := range ps.nodeSelector {
		if have, ok := labels[k]; ok && have != v {
			return false
		}
	}
	var terms [][]corev1.NodeSelectorRequirement
	for _, t := range ps.affinity {
		var kept []corev1.NodeSelectorRequirement
		for _, e := range t.MatchExpressions {
			if _, ok := labels[e.Key]; ok {
				kept = append(kept, e)
			}
		}
		if len(kept) == 0 {
			// A term with no relevant expression matches every flavor: the terms are ORed.
			return true
		}
		terms = append(terms, kept)
	}
	if len(terms) == 0 {
		return true
	}
	return slices.ContainsFunc(terms, func(exprs []corev1.NodeSelectorRequirement) bool {
		return !slices.ContainsFunc(exprs, func(e corev1.NodeSelectorRequirement) bool { return !requirementMatches(e, labels) })
	})
}

// requirementMatches evaluates one expression on a key the flavor has (so Exists holds and
// DoesNotExist does not).
func requirementMatches(e corev1.NodeSelectorRequirement, labels map[string]string) bool {
	v := labels[e.Key]
	switch e.Operator {
	case corev1.NodeSelectorOpIn:
		return slices.Contains(e.Values, v)
	case corev1.NodeSelectorOpNotIn:
		return !slices.Contains(e.Values, v)
	case corev1.NodeSelectorOpExists:
		return true
	case corev1.NodeSelectorOpDoesNotExist:
		return false
	}
	return false
}

// affinitySupported reports whether the simulator evaluates every term of a required node
// affinity: In, NotIn, Exists and DoesNotExist on labels, and no field selectors.
func affinitySupported(terms []corev1.NodeSelectorTerm) bool {
	for _, t := range terms {
		if len(t.MatchFields) > 0 {
			return false
		}
		for _, e := range t.MatchExpressions {
			switch e.Operator {
			case corev1.NodeSelectorOpIn, corev1.NodeSelectorOpNotIn, corev1.NodeSelectorOpExists, corev1.NodeSelectorOpDoesNotExist:
			default:
				return false
			}
		}
	}
	return true
}
