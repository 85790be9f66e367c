package sagemakeremulator

import (
	"context"
	"encoding/json"
	"fmt"
	"slices"
	"strings"
)

type operation func(e *Emulator, ctx context.Context, body []byte) (any, *apiError)

// operations are the operations served, by the name X-Amz-Target gives after "SageMaker.".
var operations = func() map[string]operation {
	ops := map[string]operation{
		"CreateComputeQuota":           (*Emulator).createComputeQuota,
		"UpdateComputeQuota":           (*Emulator).updateComputeQuota,
		"CreateClusterSchedulerConfig": (*Emulator).createClusterSchedulerConfig,
		"UpdateClusterSchedulerConfig": (*Emulator).updateClusterSchedulerConfig,
		"DescribeCluster":              (*Emulator).describeCluster,
		"AddTags":                      (*Emulator).addTags,
		"DeleteTags":                   (*Emulator).deleteTags,
		"ListTags":                     (*Emulator).listTags,
	}
	addShared(ops, "ComputeQuota", func(e *Emulator) *store[ComputeQuota, *ComputeQuota] { return e.quotas })
	addShared(ops, "ClusterSchedulerConfig", func(e *Emulator) *store[ClusterSchedulerConfig, *ClusterSchedulerConfig] { return e.configs })
	return ops
}()

// addShared registers Describe<name>, Delete<name> and List<name>s, served alike for each kind.
func addShared[T any, P object[T]](ops map[string]operation, name string, pick func(*Emulator) *store[T, P]) {
	ops["Describe"+name] = func(e *Emulator, ctx context.Context, body []byte) (any, *apiError) {
		return describeOp(ctx, e, pick(e), body)
	}
	ops["Delete"+name] = func(e *Emulator, _ context.Context, body []byte) (any, *apiError) {
		return deleteOp(e, pick(e), body)
	}
	ops["List"+name+"s"] = func(e *Emulator, ctx context.Context, body []byte) (any, *apiError) {
		return listOp(ctx, e, pick(e), body)
	}
}

// quotaSpec and schedulerConfigSpec describe the two kinds for the operations they share.
var (
	quotaSpec = kindSpec[ComputeQuota]{
		kind: "compute quota", arnType: "compute-quota",
		arnMember: "ComputeQuotaArn", idMember: "ComputeQuotaId", versionMember: "ComputeQuotaVersion",
		listMember: "ComputeQuotaSummaries",
		sortKeys:   quotaSortKeys,
		summary:    func(q ComputeQuota) any { return quotaSummary(q) },
		detail: func(q ComputeQuota) any {
			return describeComputeQuotaOutput{quotaSummary(q), q.Description, q.FailureReason}
		},
		changed: ClusterWriter.QuotaChanged,
		deleted: ClusterWriter.QuotaDeleted,
	}
	schedulerConfigSpec = kindSpec[ClusterSchedulerConfig]{
		kind: "cluster scheduler config", arnType: "cluster-scheduler-config",
		arnMember: "ClusterSchedulerConfigArn", idMember: "ClusterSchedulerConfigId",
		versionMember: "ClusterSchedulerConfigVersion",
		listMember:    "ClusterSchedulerConfigSummaries", sortKeys: schedulerConfigSortKeys,
		summary: func(c ClusterSchedulerConfig) any { return configSummary(c) },
		// StatusDetails is left out: AWS does not say what it holds per component.
		detail: func(c ClusterSchedulerConfig) any {
			return struct {
				schedulerConfigSummary
				FailureReason   string           `json:"FailureReason,omitempty"`
				SchedulerConfig *SchedulerConfig `json:"SchedulerConfig"`
				Description     string           `json:"Description,omitempty"`
			}{configSummary(c), c.FailureReason, &c.Config, c.Description}
		},
		changed: ClusterWriter.SchedulerConfigChanged,
		deleted: ClusterWriter.SchedulerConfigDeleted,
	}
)

// Compute quotas: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateComputeQuota.html
// and the pages of DescribeComputeQuota, UpdateComputeQuota, DeleteComputeQuota and
// ListComputeQuotas.

// createInput holds the members every create carries besides its kind's own.
type createInput struct {
	Name        *string `json:"Name"`
	Description *string `json:"Description"`
	ClusterArn  *string `json:"ClusterArn"`
	Tags        []Tag   `json:"Tags"`
}

func (in *createInput) check(v *violations) {
	v.checkName(in.Name)
	v.checkDescription(in.Description)
	v.checkClusterARN(in.ClusterArn, true)
	v.checkTags(in.Tags, false)
}

// createOp stores what build makes of the checked input on its cluster and answers with the
// new object's ARN and ID.
func createOp[T any, P object[T]](e *Emulator, s *store[T, P], in *createInput, build func(Record, *clusterEntry) (T, *apiError)) (any, *apiError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	cluster, aerr := e.clusterByARN(*in.ClusterArn)
	if aerr != nil {
		return nil, aerr
	}
	r := Record{Name: *in.Name, ClusterARN: cluster.arn, Tags: in.Tags}
	if in.Description != nil {
		r.Description = *in.Description
	}
	obj, aerr := build(r, cluster)
	if aerr != nil {
		return nil, aerr
	}
	ent, aerr := s.create(e, obj)
	if aerr != nil {
		return nil, aerr
	}
	r = *rec[T, P](&ent.obj)
	return map[string]string{s.arnMember: r.ARN, s.idMember: r.ID}, nil
}

func (e *Emulator) createComputeQuota(_ context.Context, body []byte) (any, *apiError) {
	var in struct {
		createInput
		ComputeQuotaConfig *ComputeQuotaConfig `json:"ComputeQuotaConfig"`
		ComputeQuotaTarget *ComputeQuotaTarget `json:"ComputeQuotaTarget"`
		ActivationState    string              `json:"ActivationState"`
	}
	if err := decodeChecked(body, &in, func(v *violations) {
		in.check(v)
		if v.required(in.ComputeQuotaConfig != nil, "computeQuotaConfig") {
			v.checkQuotaConfig(in.ComputeQuotaConfig, "computeQuotaConfig")
		}
		if v.required(in.ComputeQuotaTarget != nil, "computeQuotaTarget") {
			v.checkTarget(in.ComputeQuotaTarget, "computeQuotaTarget")
		}
		v.enum(in.ActivationState, "activationState", activationStates)
	}); err != nil {
		return nil, err
	}
	return createOp(e, e.quotas, &in.createInput, func(r Record, cluster *clusterEntry) (ComputeQuota, *apiError) {
		q := ComputeQuota{Record: r, ActivationState: in.ActivationState, Target: *in.ComputeQuotaTarget, Config: *in.ComputeQuotaConfig}
		return q, cluster.checkInstanceTypes(in.ComputeQuotaConfig)
	})
}

type updateComputeQuotaInput struct {
	ComputeQuotaId     *string             `json:"ComputeQuotaId"`
	TargetVersion      *int32              `json:"TargetVersion"`
	ComputeQuotaConfig *ComputeQuotaConfig `json:"ComputeQuotaConfig"`
	ComputeQuotaTarget *ComputeQuotaTarget `json:"ComputeQuotaTarget"`
	ActivationState    string              `json:"ActivationState"`
	Description        *string             `json:"Description"`
}

func (in *updateComputeQuotaInput) check(v *violations) {
	v.checkUpdated(in.ComputeQuotaId, "computeQuotaId", in.TargetVersion)
	if in.ComputeQuotaConfig != nil {
		v.checkQuotaConfig(in.ComputeQuotaConfig, "computeQuotaConfig")
	}
	if in.ComputeQuotaTarget != nil {
		v.checkTarget(in.ComputeQuotaTarget, "computeQuotaTarget")
	}
	v.enum(in.ActivationState, "activationState", activationStates)
	v.checkDescription(in.Description)
}

func (e *Emulator) updateComputeQuota(_ context.Context, body []byte) (any, *apiError) {
	var in updateComputeQuotaInput
	return update(e, body, &in, in.check, e.applyQuotaUpdate, func(q *ComputeQuota) any {
		return map[string]any{"ComputeQuotaArn": q.ARN, "ComputeQuotaVersion": q.Version}
	})
}

// update answers an Update operation: body decoded into in and checked by check, then applied
// under mu, and the answer made of the updated object.
func update[In, T any](e *Emulator, body []byte, in *In, check func(*violations), apply func(In) (T, *apiError),
	answer func(T) any) (any, *apiError) {
	if err := decodeChecked(body, in, check); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	out, err := apply(*in)
	if err != nil {
		return nil, err
	}
	return answer(out), nil
}

// applyQuotaUpdate updates a quota from a checked input; members left out keep their value, a
// member given replaces the whole member (emulator's reading: AWS documents no merge).
// Callers hold mu.
func (e *Emulator) applyQuotaUpdate(in updateComputeQuotaInput) (*ComputeQuota, *apiError) {
	ent, err := e.quotas.get(*in.ComputeQuotaId)
	if err != nil {
		return nil, err
	}
	if in.ComputeQuotaConfig != nil {
		cluster, err := e.clusterByARN(ent.obj.ClusterARN)
		if err != nil {
			return nil, err
		}
		if err := cluster.checkInstanceTypes(in.ComputeQuotaConfig); err != nil {
			return nil, err
		}
	}
	err = e.quotas.update(e, ent, *in.TargetVersion, func(q *ComputeQuota) {
		replaceGiven(&q.Config, in.ComputeQuotaConfig)
		replaceGiven(&q.Target, in.ComputeQuotaTarget)
		if in.ActivationState != "" {
			q.ActivationState = in.ActivationState
		}
		replaceGiven(&q.Description, in.Description)
	})
	if err != nil {
		return nil, err
	}
	return &ent.obj, nil
}

// decodeChecked decodes body into in and has check list what is wrong with it: the answer to a
// request the API refuses.
func decodeChecked(body []byte, in any, check func(v *violations)) *apiError {
	if err := decode(body, in); err != nil {
		return err
	}
	var v violations
	check(&v)
	return v.err()
}

// replaceGiven sets *member to *given when an update gives the member: a member left out keeps
// its value.
func replaceGiven[T any](member, given *T) {
	if given != nil {
		*member = *given
	}
}

// recordSummary holds the members that the summaries of both kinds carry under the same names:
// what a Record holds besides the members named after the kind (ARN, ID and version).
type recordSummary struct {
	Name             string        `json:"Name"`
	Status           string        `json:"Status"`
	ClusterArn       string        `json:"ClusterArn"`
	CreationTime     *epochSeconds `json:"CreationTime"`
	LastModifiedTime *epochSeconds `json:"LastModifiedTime,omitempty"`
}

func summaryOf(r Record) recordSummary {
	return recordSummary{Name: r.Name, Status: r.Status, ClusterArn: r.ClusterARN,
		CreationTime: epoch(r.CreationTime), LastModifiedTime: epoch(r.LastModifiedTime)}
}

type computeQuotaSummary struct {
	ComputeQuotaArn     string `json:"ComputeQuotaArn"`
	ComputeQuotaId      string `json:"ComputeQuotaId"`
	ComputeQuotaVersion int32  `json:"ComputeQuotaVersion"`
	recordSummary
	ComputeQuotaConfig *ComputeQuotaConfig `json:"ComputeQuotaConfig,omitempty"`
	ComputeQuotaTarget ComputeQuotaTarget  `json:"ComputeQuotaTarget"`
	ActivationState    string              `json:"ActivationState,omitempty"`
}

func quotaSummary(q ComputeQuota) computeQuotaSummary {
	return computeQuotaSummary{
		ComputeQuotaArn: q.ARN, ComputeQuotaId: q.ID, ComputeQuotaVersion: q.Version, recordSummary: summaryOf(q.Record),
		ComputeQuotaConfig: &q.Config, ComputeQuotaTarget: q.Target, ActivationState: q.ActivationState,
	}
}

// describeComputeQuotaOutput is the summary plus what ListComputeQuotas does not carry.
type describeComputeQuotaOutput struct {
	computeQuotaSummary
	Description   string `json:"Description,omitempty"`
	FailureReason string `json:"FailureReason,omitempty"`
}

// Cluster scheduler configs: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_CreateClusterSchedulerConfig.html
// and the pages of the other ClusterSchedulerConfig operations. AWS documents no limit of one
// per cluster, so several are accepted (permissive).

func (e *Emulator) createClusterSchedulerConfig(_ context.Context, body []byte) (any, *apiError) {
	var in struct {
		createInput
		SchedulerConfig *SchedulerConfig `json:"SchedulerConfig"`
	}
	if err := decodeChecked(body, &in, func(v *violations) {
		in.check(v)
		if v.required(in.SchedulerConfig != nil, "schedulerConfig") {
			v.checkSchedulerConfig(in.SchedulerConfig, "schedulerConfig")
		}
	}); err != nil {
		return nil, err
	}
	return createOp(e, e.configs, &in.createInput, func(r Record, _ *clusterEntry) (ClusterSchedulerConfig, *apiError) {
		return ClusterSchedulerConfig{Record: r, Config: *in.SchedulerConfig}, nil
	})
}

type updateSchedulerConfigInput struct {
	ClusterSchedulerConfigId *string          `json:"ClusterSchedulerConfigId"`
	TargetVersion            *int32           `json:"TargetVersion"`
	SchedulerConfig          *SchedulerConfig `json:"SchedulerConfig"`
	Description              *string          `json:"Description"`
}

func (in *updateSchedulerConfigInput) check(v *violations) {
	v.checkUpdated(in.ClusterSchedulerConfigId, "clusterSchedulerConfigId", in.TargetVersion)
	if in.SchedulerConfig != nil {
		v.checkSchedulerConfig(in.SchedulerConfig, "schedulerConfig")
	}
	v.checkDescription(in.Description)
}

func (e *Emulator) updateClusterSchedulerConfig(_ context.Context, body []byte) (any, *apiError) {
	var in updateSchedulerConfigInput
	return update(e, body, &in, in.check, e.applyConfigUpdate, func(c *ClusterSchedulerConfig) any {
		return map[string]any{"ClusterSchedulerConfigArn": c.ARN, "ClusterSchedulerConfigVersion": c.Version}
	})
}

// applyConfigUpdate updates a cluster scheduler config from a checked input, as
// applyQuotaUpdate does a quota. Callers hold mu.
func (e *Emulator) applyConfigUpdate(in updateSchedulerConfigInput) (*ClusterSchedulerConfig, *apiError) {
	ent, err := e.configs.get(*in.ClusterSchedulerConfigId)
	if err != nil {
		return nil, err
	}
	err = e.configs.update(e, ent, *in.TargetVersion, func(c *ClusterSchedulerConfig) {
		replaceGiven(&c.Config, in.SchedulerConfig)
		replaceGiven(&c.Description, in.Description)
	})
	if err != nil {
		return nil, err
	}
	return &ent.obj, nil
}

type schedulerConfigSummary struct {
	ClusterSchedulerConfigArn     string `json:"ClusterSchedulerConfigArn"`
	ClusterSchedulerConfigId      string `json:"ClusterSchedulerConfigId"`
	ClusterSchedulerConfigVersion int32  `json:"ClusterSchedulerConfigVersion"`
	recordSummary
}

func configSummary(c ClusterSchedulerConfig) schedulerConfigSummary {
	return schedulerConfigSummary{
		ClusterSchedulerConfigArn: c.ARN, ClusterSchedulerConfigId: c.ID, ClusterSchedulerConfigVersion: c.Version,
		recordSummary: summaryOf(c.Record),
	}
}

// idInput is the input of the Describe and Delete operations of one kind: its ID member and,
// for Describe, its version member.
type idInput struct {
	id      *string
	version *int32
}

func decodeIDInput[T any](body []byte, spec *kindSpec[T]) (idInput, *apiError) {
	var members map[string]json.RawMessage
	if err := decode(body, &members); err != nil {
		return idInput{}, err
	}
	var in idInput
	for name, dst := range map[string]any{spec.idMember: &in.id, spec.versionMember: &in.version} {
		if raw, ok := members[name]; ok {
			if err := json.Unmarshal(raw, dst); err != nil {
				return idInput{}, validationError(fmt.Sprintf("Value at '%s' is not valid: %v", name, err))
			}
		}
	}
	var v violations
	v.checkID(in.id, lowerFirst(spec.idMember))
	return in, v.err()
}

func lowerFirst(s string) string { return strings.ToLower(s[:1]) + s[1:] }

// describeOp answers DescribeComputeQuota and DescribeClusterSchedulerConfig: the object's
// due transition completes first, and an answer about its current version counts as an
// observation of its status.
func describeOp[T any, P object[T]](ctx context.Context, e *Emulator, s *store[T, P], body []byte) (any, *apiError) {
	in, aerr := decodeIDInput(body, &s.kindSpec)
	if aerr != nil {
		return nil, aerr
	}
	if err := settle(ctx, e, s, []string{*in.id}, false); err != nil {
		return nil, errInternal
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	ent, aerr := s.get(*in.id)
	if aerr != nil {
		return nil, aerr
	}
	obj, aerr := s.version(ent, in.version)
	if aerr != nil {
		return nil, aerr
	}
	if in.version == nil || *in.version == rec[T, P](&ent.obj).Version {
		s.observe(ent)
	}
	return s.detail(obj), nil
}

// deleteOp answers DeleteComputeQuota and DeleteClusterSchedulerConfig.
func deleteOp[T any, P object[T]](e *Emulator, s *store[T, P], body []byte) (any, *apiError) {
	in, aerr := decodeIDInput(body, &s.kindSpec)
	if aerr != nil {
		return nil, aerr
	}
	return struct{}{}, remove(e, s, *in.id)
}

// listOp answers ListComputeQuotas and ListClusterSchedulerConfigs; every due transition
// completes first, and each object on the page counts an observation.
func listOp[T any, P object[T]](ctx context.Context, e *Emulator, s *store[T, P], body []byte) (any, *apiError) {
	var q listQuery
	if err := decode(body, &q); err != nil {
		return nil, err
	}
	if err := q.check(s.sortKeys); err != nil {
		return nil, err
	}
	if err := settle(ctx, e, s, nil, false); err != nil {
		return nil, errInternal
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	entries, next, err := s.list(q, e.opts.DefaultMaxResults)
	if err != nil {
		return nil, err
	}
	summaries := make([]any, 0, len(entries))
	for _, ent := range entries {
		s.observe(ent)
		summaries = append(summaries, s.summary(clone(ent.obj)))
	}
	out := map[string]any{s.listMember: summaries}
	if next != nil {
		out["NextToken"] = *next
	}
	return out, nil
}

// remove starts deleting an object. Deleting one already being deleted succeeds and changes
// nothing (permissive: AWS documents only ResourceNotFound for DeleteComputeQuota).
func remove[T any, P object[T]](e *Emulator, s *store[T, P], id string) *apiError {
	e.mu.Lock()
	defer e.mu.Unlock()
	ent, err := s.get(id)
	if err != nil {
		return err
	}
	s.delete(e, ent)
	return nil
}

// DescribeCluster: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_DescribeCluster.html
// The emulator reports the members a quota needs: ARN, name, status, instance groups and the
// EKS orchestrator.
func (e *Emulator) describeCluster(_ context.Context, body []byte) (any, *apiError) {
	var in struct {
		ClusterName *string `json:"ClusterName"`
	}
	if err := decodeChecked(body, &in, func(v *violations) {
		if v.required(in.ClusterName != nil, "clusterName") {
			v.str(*in.ClusterName, "clusterName", 0, maxClusterARN, &clusterNameOrARNPattern)
		}
	}); err != nil {
		return nil, err
	}
	e.mu.Lock()
	defer e.mu.Unlock()
	var cluster *clusterEntry
	if strings.HasPrefix(*in.ClusterName, "arn:") {
		var err *apiError
		if cluster, err = e.clusterByARN(*in.ClusterName); err != nil {
			return nil, err
		}
	} else if cluster = e.clusterByName(*in.ClusterName); cluster == nil {
		return nil, notFound("Cluster %s does not exist.", *in.ClusterName)
	}
	type group struct {
		InstanceGroupName string `json:"InstanceGroupName"`
		InstanceType      string `json:"InstanceType"`
		CurrentCount      int32  `json:"CurrentCount"`
		TargetCount       int32  `json:"TargetCount"`
		Status            string `json:"Status"`
	}
	groups := []group{}
	for _, g := range cluster.InstanceGroups {
		groups = append(groups, group{g.Name, g.InstanceType, g.Count, g.Count, "InService"})
	}
	type eks struct {
		ClusterArn string `json:"ClusterArn"`
	}
	return struct {
		ClusterArn     string         `json:"ClusterArn"`
		ClusterName    string         `json:"ClusterName"`
		ClusterStatus  string         `json:"ClusterStatus"`
		CreationTime   *epochSeconds  `json:"CreationTime"`
		InstanceGroups []group        `json:"InstanceGroups"`
		Orchestrator   map[string]eks `json:"Orchestrator"`
	}{cluster.arn, cluster.Name, "InService", epoch(e.created), groups, map[string]eks{"Eks": {cluster.EKSClusterARN}}}, nil
}

func (e *Emulator) clusterByName(name string) *clusterEntry {
	for i := range e.clusters {
		if e.clusters[i].Name == name {
			return &e.clusters[i]
		}
	}
	return nil
}

// clusterByARN finds a cluster of the account. An ARN of another region is refused as SageMaker
// refuses one: "ARN should be scoped to correct region: us-west-2" (a ValidationException quoted
// in https://github.com/aws/amazon-sagemaker-examples/issues/1438). A cluster the account lacks
// is ResourceNotFound (emulator's choice: AWS documents no error for it on these operations).
func (e *Emulator) clusterByARN(arn string) (*clusterEntry, *apiError) {
	if parts := strings.Split(arn, ":"); len(parts) > 3 && parts[3] != e.opts.Region {
		return nil, validationError("ARN should be scoped to correct region: " + e.opts.Region)
	}
	for i := range e.clusters {
		if e.clusters[i].arn == arn {
			return &e.clusters[i], nil
		}
	}
	return nil, notFound("Cluster %s does not exist.", arn)
}

// checkInstanceTypes refuses allocations of instance types the cluster has no instance group
// of. The member is documented as "The instance type of the instance group for the cluster"
// (https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_ComputeQuotaResourceConfig.html);
// that a mismatch is refused at once, as a ValidationException, is the emulator's choice.
func (c *clusterEntry) checkInstanceTypes(cfg *ComputeQuotaConfig) *apiError {
	resources := cfg.ComputeQuotaResources
	if s := cfg.ResourceSharingConfig; s != nil {
		resources = append(slices.Clip(resources), s.AbsoluteBorrowLimits...)
	}
	var missing []string
	for _, r := range resources {
		has := slices.ContainsFunc(c.InstanceGroups, func(g InstanceGroup) bool { return g.InstanceType == r.InstanceType })
		if !has && !slices.Contains(missing, r.InstanceType) {
			missing = append(missing, r.InstanceType)
		}
	}
	if len(missing) > 0 {
		return validationError(fmt.Sprintf("Cluster %s has no instance group of instance type %s.", c.Name, strings.Join(missing, ", ")))
	}
	return nil
}
