package provider

import (
	"context"

	"github.com/hashicorp/terraform-plugin-framework/diag"
	"github.com/hashicorp/terraform-plugin-framework/path"
	"github.com/hashicorp/terraform-plugin-framework/resource"
	"github.com/hashicorp/terraform-plugin-framework/resource/schema"
	"github.com/hashicorp/terraform-plugin-framework/types"

	"github.com/quotaworks/terraform-provider-hyperpod/internal/quota"
)

// Tags as the aws provider does them: a resource's own `tags`, the provider's
// `task_governance.default_tags`, and the computed `tags_all`, its own merged over the defaults.

func tagsAttribute(object string) schema.MapAttribute {
	return schema.MapAttribute{
		ElementType: types.StringType, Optional: true,
		Description: "Tags of the " + object + ", merged over the provider's `task_governance.default_tags` (a key set " +
			"here wins). Through `task_governance` they are the SageMaker object's AWS tags (sent with the create, then " +
			"changed by key with `AddTags` and `DeleteTags`, without replacing it), for attribute-based access control, " +
			"cost allocation and inventory. On a cluster that runs its own Kueue they are kept as JSON in the annotation `" +
			quota.AnnotationTags + "` of the objects the resource writes. AWS's rules apply on both: keys of 1-128 " +
			"characters, values of at most 256, letters, digits, spaces and `_ . : / = + - @`, no key starting with `aws:`, " +
			"at most 50 tags with the default tags. A refresh through `task_governance` reads the tags (one `ListTags` per " +
			"object) only of an object whose `tags_all` holds some, or on import: tags added outside Terraform to an " +
			"object with none are not seen.",
	}
}

func tagsAllAttribute(object string) schema.MapAttribute {
	return schema.MapAttribute{
		ElementType: types.StringType, Computed: true,
		Description: "All the tags of the " + object + ": `tags` merged over the provider's `task_governance.default_tags` " +
			"(on a cluster that runs its own Kueue there are no default tags, so it equals `tags`). Known at plan time " +
			"unless a tag or default tag is not.",
	}
}

// defaultTags is the provider's task_governance.default_tags; unknown is set while they are not
// known (a value from another resource).
type defaultTags struct {
	tags    map[string]string
	unknown bool
}

// readDefaultTags converts task_governance.default_tags and checks them at their path.
func readDefaultTags(tg taskGovernanceModel, diags *diag.Diagnostics) defaultTags {
	m, ok := modelOf[defaultTagsModel](tg.DefaultTags)
	if !ok {
		return defaultTags{unknown: tg.DefaultTags.IsUnknown()}
	}
	at := path.Root(tagOf[providerModel]("TaskGovernance")).AtName(tagOf[taskGovernanceModel]("DefaultTags")).AtName(tagOf[defaultTagsModel]("Tags"))
	tags, unknownKeys, unknown := tagMapOf(m.Tags, at, diags)
	if unknown || len(unknownKeys) > 0 {
		return defaultTags{unknown: true}
	}
	addTagProblems(diags, at, quota.ValidateTags("tags", tags, nil))
	return defaultTags{tags: tags}
}

// tagMapOf reads a tags map: its known values, the keys whose values are unknown, and whether
// the map itself is unknown. A null value is refused at its key: a tag always has a value.
func tagMapOf(v types.Map, at path.Path, diags *diag.Diagnostics) (tags map[string]string, unknownKeys map[string]bool, unknown bool) {
	if v.IsUnknown() {
		return nil, nil, true
	}
	tags = map[string]string{}
	for k, e := range v.Elements() {
		s, _ := e.(types.String)
		switch {
		case s.IsUnknown():
			if unknownKeys == nil {
				unknownKeys = map[string]bool{}
			}
			unknownKeys[k] = true
		case s.IsNull():
			diags.AddAttributeError(at.AtMapKey(k), "Tag without a value", at.AtMapKey(k).String()+
				": a tag's value cannot be null. Set \"\" for a tag that carries only its key, or remove the key.")
		default:
			tags[k] = s.ValueString()
		}
	}
	return tags, unknownKeys, false
}

// addTagProblems adds the problems of quota's tag checks (path {attr[, key]}) at at.
func addTagProblems(diags *diag.Diagnostics, at path.Path, problems []quota.Problem) {
	for _, p := range problems {
		where := at
		if len(p.Path) > 1 {
			where = at.AtMapKey(p.Path[1])
		}
		diags.AddAttributeError(where, p.Summary, where.String()+": "+p.Detail)
	}
}

// planTagsAll checks the configured tags and plans tags_all: the tags merged over the default
// tags, unknown while either is not known.
func (pd *providerData) planTagsAll(config types.Map, diags *diag.Diagnostics) types.Map {
	at := path.Root(tagOf[tagsModel]("Tags"))
	tags, unknownKeys, unknown := tagMapOf(config, at, diags)
	if unknown {
		return types.MapUnknown(types.StringType)
	}
	addTagProblems(diags, at, quota.ValidateTags("tags", tags, unknownKeys))
	if len(unknownKeys) > 0 || pd.defaultTags.unknown {
		return types.MapUnknown(types.StringType)
	}
	all := quota.MergeTags(pd.defaultTags.tags, tags)
	addTagProblems(diags, at, quota.CheckTagCount("tags", all))
	return tagsValue(all)
}

// tagsAll is what the object carries for the configured tags (known at apply time).
func (pd *providerData) tagsAll(config types.Map) map[string]string {
	return quota.MergeTags(pd.defaultTags.tags, knownStringMap(config))
}

// tagsValue is a map attribute value; an empty map for none (tags_all is never null once read).
func tagsValue(tags map[string]string) types.Map {
	v, _ := types.MapValueFrom(context.Background(), types.StringType, tags)
	if tags == nil {
		v, _ = types.MapValueFrom(context.Background(), types.StringType, map[string]string{})
	}
	return v
}

// readsTags reports whether a refresh reads the stored tags where that costs a request: for an
// object whose state holds some, or none known yet (an import, or state from before tags).
func readsTags(prior tagsModel) bool {
	return prior.TagsAll.IsNull() || prior.TagsAll.IsUnknown() || len(prior.TagsAll.Elements()) > 0
}

// refreshed is the resource's tags after a read found stored on the object: tags_all is what
// it carries, tags what of that is the resource's own rather than the provider's defaults.
func (pd *providerData) refreshed(prior tagsModel, stored map[string]string) tagsModel {
	own := quota.ResourceTags(stored, pd.defaultTags.tags, knownStringMap(prior.Tags), prior.Tags.IsNull())
	tags := types.MapNull(types.StringType)
	if own != nil {
		tags = tagsValue(own)
	}
	return tagsModel{Tags: tags, TagsAll: tagsValue(stored)}
}

// planTags plans tags_all of a resource whose configuration is config, at the root of the plan.
func (pd *providerData) planTags(ctx context.Context, req resource.ModifyPlanRequest, resp *resource.ModifyPlanResponse) {
	var config types.Map
	resp.Diagnostics.Append(req.Config.GetAttribute(ctx, path.Root(tagOf[tagsModel]("Tags")), &config)...)
	if resp.Diagnostics.HasError() {
		return
	}
	all := pd.planTagsAll(config, &resp.Diagnostics)
	resp.Diagnostics.Append(resp.Plan.SetAttribute(ctx, path.Root(tagOf[tagsModel]("TagsAll")), all)...)
}
