package review

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"sort"
	"strings"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/catalog"
	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Plan is what a review takes from a saved plan: its compute quota changes, planned with the
// instance types of the provider block the plan was made with.
type Plan struct {
	Changes []Change
	// Catalog is the built-in catalog with the provider block's instance_types applied.
	Catalog *catalog.Catalog
	// InstanceTypesUnknown says why the provider block's instance_types are not in the plan, so
	// that Catalog is the built-in one alone; "" when they are there or the block sets none.
	InstanceTypesUnknown string
	// TaskGovernance says the provider block writes quotas through the SageMaker API (it has a
	// task_governance block), whose task-governance add-on writes the Kueue objects.
	TaskGovernance bool
}

// PlannedResourceChange is the part of a resource change of `terraform show -json` that
// ChangesOf reads.
type PlannedResourceChange struct {
	Address string `json:"address"`
	Mode    string `json:"mode"`
	Type    string `json:"type"`
	Change  struct {
		Actions []string        `json:"actions"`
		Before  json.RawMessage `json:"before"`
		After   json.RawMessage `json:"after"`
	} `json:"change"`
}

// planProviderConfig is a provider block in the configuration section of `terraform show -json`.
type planProviderConfig struct {
	FullName    string                     `json:"full_name"`
	Expressions map[string]json.RawMessage `json:"expressions"`
}

// planExpression is an attribute's expression there: its value only when it is a constant.
type planExpression struct {
	ConstantValue json.RawMessage `json:"constant_value"`
	References    []string        `json:"references"`
}

// ReadPlan reads a saved plan from `terraform show -json`: its compute quota changes (see
// ChangesOf), with the instance types of its hyperpod provider block and where it writes.
func ReadPlan(r io.Reader) (Plan, error) {
	var plan struct {
		FormatVersion   string                  `json:"format_version"`
		ResourceChanges []PlannedResourceChange `json:"resource_changes"`
		Configuration   struct {
			ProviderConfig map[string]planProviderConfig `json:"provider_config"`
		} `json:"configuration"`
	}
	if err := json.NewDecoder(r).Decode(&plan); err != nil {
		return Plan{}, fmt.Errorf("reading the plan (the output of terraform show -json of a saved plan): %w", err)
	}
	if plan.FormatVersion == "" {
		return Plan{}, errors.New("the input has no format_version: give it the output of terraform show -json <saved plan>")
	}
	cat, unknown, err := planCatalog(plan.Configuration.ProviderConfig)
	if err != nil {
		return Plan{}, err
	}
	changes, err := ChangesOf(plan.ResourceChanges, cat, unknown)
	if err != nil {
		return Plan{}, err
	}
	return Plan{Changes: changes, Catalog: cat, InstanceTypesUnknown: unknown,
		TaskGovernance: taskGovernance(plan.Configuration.ProviderConfig)}, nil
}

// taskGovernance reports whether the plan's hyperpod provider block has task_governance.
func taskGovernance(configs map[string]planProviderConfig) bool {
	for _, c := range configs {
		if _, ok := c.Expressions["task_governance"]; ok && isHyperpod(c) {
			return true
		}
	}
	return false
}

func isHyperpod(c planProviderConfig) bool { return strings.HasSuffix(c.FullName, "/hyperpod") }

// planCatalog is the catalog of the plan's hyperpod provider block: the built-in one with the
// block's instance_types, or the built-in one alone, with why, when the plan holds no value of
// them (an expression with references, or one terraform show does not evaluate).
func planCatalog(configs map[string]planProviderConfig) (*catalog.Catalog, string, error) {
	keys := make([]string, 0, len(configs))
	for k, c := range configs {
		if isHyperpod(c) {
			keys = append(keys, k)
		}
	}
	sort.Strings(keys)
	if len(keys) == 0 {
		return catalog.Builtin(), "", nil
	}
	raw := configs[keys[0]].Expressions["instance_types"]
	for _, k := range keys[1:] {
		if !bytes.Equal(configs[k].Expressions["instance_types"], raw) {
			return nil, "", fmt.Errorf("the plan has hyperpod provider blocks %s with different instance_types: "+
				"review the plan of one provider block (one cluster) at a time", strings.Join(keys, ", "))
		}
	}
	if len(raw) == 0 {
		return catalog.Builtin(), "", nil
	}
	var e planExpression
	if err := json.Unmarshal(raw, &e); err != nil {
		return nil, "", fmt.Errorf("reading the provider block's instance_types in the plan: %w", err)
	}
	switch {
	case len(e.References) > 0:
		return catalog.Builtin(), "the provider block's `instance_types` refers to " + strings.Join(e.References, ", ") +
			", whose values `terraform show -json` does not include", nil
	case len(e.ConstantValue) == 0:
		return catalog.Builtin(), "the provider block's `instance_types` is an expression whose value " +
			"`terraform show -json` does not include", nil
	}
	overrides, err := overridesOf(e.ConstantValue)
	if err != nil {
		return nil, "", fmt.Errorf("reading the provider block's instance_types in the plan: %w", err)
	}
	cat, errs := catalog.New(overrides)
	if len(errs) > 0 {
		return nil, "", fmt.Errorf("the provider block's instance_types: %s. Fix or remove this entry of instance_types", errs[0].Error())
	}
	return cat, "", nil
}

// ChangesOf turns the hyperpod_compute_quota changes of a saved plan into the quotas they
// leave, planned as the provider plans them (quota.Plan) with the instance types of cat. The
// plan's amounts are the ones it computed; a change whose amounts are not known until apply is
// an error naming it. When typesUnknown says why the provider's instance_types are not known, a
// change of a type cat does not know is returned not predicted, with that reason.
func ChangesOf(changes []PlannedResourceChange, cat *catalog.Catalog, typesUnknown string) ([]Change, error) {
	var out []Change
	for _, rc := range changes {
		if rc.Mode != "managed" || rc.Type != "hyperpod_compute_quota" || isNoop(rc.Change.Actions) {
			continue
		}
		c := Change{Address: rc.Address, Actions: rc.Change.Actions}
		before, err := PlannedQuota(rc.Change.Before)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rc.Address, err)
		}
		after, err := PlannedQuota(rc.Change.After)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", rc.Address, err)
		}
		switch {
		case after != nil:
			c.Team = after.Team
			if t, ok := typeNotIn(cat, *after); !ok && typesUnknown != "" {
				c.NotPredicted = fmt.Sprintf("%s is not in the built-in catalog, and %s", t, typesUnknown)
				break
			}
			planned, problems := quota.Plan(cat, *after)
			if len(problems) > 0 {
				return nil, fmt.Errorf("%s: %s", c.Address, problems[0].Detail)
			}
			if !planned.Known() {
				return nil, fmt.Errorf("%s: its amounts are not known until apply", c.Address)
			}
			c.Planned = &planned
		case before != nil:
			c.Team = before.Team
		default:
			continue
		}
		out = append(out, c)
	}
	return out, nil
}

// typeNotIn is the first instance type of cfg that cat does not know; ok when it knows them all.
func typeNotIn(cat *catalog.Catalog, cfg quota.Config) (_ string, ok bool) {
	var names []string
	for _, e := range cfg.Resources {
		names = append(names, e.InstanceType)
	}
	for _, l := range cfg.Sharing.AbsoluteBorrowLimits {
		names = append(names, l.InstanceType)
	}
	for _, n := range names {
		if _, known := cat.Lookup(n); !known {
			return n, false
		}
	}
	return "", true
}

func isNoop(actions []string) bool {
	return len(actions) == 0 || strings.Join(actions, ",") == "no-op" || strings.Join(actions, ",") == "read"
}
