package quota

import (
	"encoding/json"
	"fmt"
	"math/big"
	"strconv"
)

// configAnnotation is the JSON in AnnotationConfiguration: the configured attributes, with
// their Terraform names, numbers as exact decimal strings, unconfigured ones omitted. Example:
//
//	{"version":1,"cohort":"research","resource_sharing":{"strategy":"LendAndBorrow","borrow_limit":"100",
//	 "absolute_borrow_limits":[{"instance_type":"ml.g5.12xlarge","count":"1","vcpu":"8"},
//	 {"instance_type":"ml.p4d.24xlarge","accelerator_partition":{"type":"mig-1g.5gb","count":"4"}}]},
//	 "resources":[{"instance_type":"ml.g5.12xlarge","count":"1"},
//	 {"instance_type":"ml.c5.9xlarge","memory_in_gib":"2.9"},
//	 {"instance_type":"ml.p4d.24xlarge","accelerator_partition":{"type":"mig-1g.5gb","count":"2"}}]}
type configAnnotation struct {
	Version int `json:"version"`
	AttributeConfig[string, string]
}

type (
	annotationSharing   = AttributeSharing[string, string]
	annotationAmounts   = AttributeAmounts[string, string]
	annotationLimit     = AttributeLimit[string, string]
	annotationEntry     = AttributeEntry[string, string]
	annotationPartition = AttributePartition[string]
)

const configAnnotationVersion = 1

func intStr(p *int64) *string {
	if p == nil {
		return nil
	}
	return ptr(fmt.Sprint(*p))
}

func ratStr(r *big.Rat) *string {
	if r == nil {
		return nil
	}
	return ptr(RatString(r))
}

func annotatedAmounts(instanceType string, count, accelerators *int64, vcpu, memoryGiB *big.Rat) annotationAmounts {
	return annotationAmounts{InstanceType: instanceType, Count: intStr(count), Accelerators: intStr(accelerators),
		VCPU: ratStr(vcpu), MemoryInGiB: ratStr(memoryGiB)}
}

func annotatedPartition(p *Partition) *annotationPartition {
	if p == nil {
		return nil
	}
	return &annotationPartition{Type: p.Type, Count: fmt.Sprint(p.Count)}
}

func encodeConfigAnnotation(c Config) (string, error) {
	a := configAnnotation{Version: configAnnotationVersion, AttributeConfig: AttributeConfig[string, string]{
		ActivationState: c.ActivationState, PreemptTeamTasks: c.PreemptTeamTasks, Cohort: c.Cohort, Resources: []annotationEntry{}}}
	s := c.Sharing
	if s.Strategy != nil || s.BorrowLimit != nil || s.AbsoluteBorrowLimits != nil {
		a.Sharing = &annotationSharing{Strategy: s.Strategy, BorrowLimit: intStr(s.BorrowLimit)}
		if s.AbsoluteBorrowLimits != nil {
			limits := []annotationLimit{}
			for _, l := range s.AbsoluteBorrowLimits {
				limits = append(limits, annotationLimit{annotatedAmounts(l.InstanceType, l.Count, l.Accelerators, l.VCPU, l.MemoryGiB),
					annotatedPartition(l.Partition)})
			}
			a.Sharing.AbsoluteBorrowLimits = &limits
		}
	}
	for _, e := range c.Resources {
		a.Resources = append(a.Resources, annotationEntry{annotatedAmounts(e.InstanceType, e.Count, e.Accelerators, e.VCPU, e.MemoryGiB),
			intStr(e.EFA), annotatedPartition(e.Partition)})
	}
	b, err := json.Marshal(a)
	if err != nil {
		return "", fmt.Errorf("encoding %s: %w", AnnotationConfiguration, err)
	}
	return string(b), nil
}

func parseIntPtr(s *string) (*int64, error) {
	if s == nil {
		return nil, nil
	}
	n, err := strconv.ParseInt(*s, 10, 64)
	if err != nil {
		return nil, err
	}
	return &n, nil
}

func parseRatPtr(s *string) (*big.Rat, bool) {
	if s == nil {
		return nil, true
	}
	return parseRat(*s)
}

// annotatedSharing returns the configured resource_sharing recorded in the annotation.
func annotatedSharing(a *configAnnotation) (Sharing, bool) {
	var s Sharing
	if a.Sharing == nil {
		return s, true
	}
	s.Strategy = cloneStr(a.Sharing.Strategy)
	var err error
	if s.BorrowLimit, err = parseIntPtr(a.Sharing.BorrowLimit); err != nil {
		return Sharing{}, false
	}
	if a.Sharing.AbsoluteBorrowLimits == nil {
		return s, true
	}
	s.AbsoluteBorrowLimits = []AbsoluteBorrowLimit{}
	for _, l := range *a.Sharing.AbsoluteBorrowLimits {
		out := AbsoluteBorrowLimit{InstanceType: l.InstanceType}
		if out.Count, err = parseIntPtr(l.Count); err != nil {
			return Sharing{}, false
		}
		if out.Accelerators, err = parseIntPtr(l.Accelerators); err != nil {
			return Sharing{}, false
		}
		if p := l.Partition; p != nil {
			n, err := strconv.ParseInt(p.Count, 10, 64)
			if err != nil {
				return Sharing{}, false
			}
			out.Partition = &Partition{Type: p.Type, Count: n}
		}
		var ok1, ok2 bool
		out.VCPU, ok1 = parseRatPtr(l.VCPU)
		out.MemoryGiB, ok2 = parseRatPtr(l.MemoryInGiB)
		if !ok1 || !ok2 {
			return Sharing{}, false
		}
		s.AbsoluteBorrowLimits = append(s.AbsoluteBorrowLimits, out)
	}
	return s, true
}

// decodeConfigAnnotation parses AnnotationConfiguration; nil when absent or unreadable (the
// queue is then read as one the provider did not annotate).
func decodeConfigAnnotation(s string) (*configAnnotation, error) {
	if s == "" {
		return nil, nil
	}
	var a configAnnotation
	if err := json.Unmarshal([]byte(s), &a); err != nil {
		return nil, nil
	}
	if a.Version > configAnnotationVersion {
		return nil, fmt.Errorf("annotation %s has format version %d, written by a newer terraform-provider-hyperpod; upgrade the provider",
			AnnotationConfiguration, a.Version)
	}
	if a.Version < 1 {
		return nil, nil
	}
	return &a, nil
}
