package sagemakeremulator

import (
	"context"
	"maps"
	"net/http"
	"slices"
	"strconv"
	"strings"
)

// Tags: https://docs.aws.amazon.com/sagemaker/latest/APIReference/API_AddTags.html and the pages
// of DeleteTags and ListTags. A resource is named by its ARN; the emulator tags its compute
// quotas and cluster scheduler configs. Tags are not part of an object's version: changing them
// neither moves the version nor starts a transition (AWS versions the definition, and tags are
// not in it).

// resourceARNPattern and maxResourceARN: ResourceArn of the three pages.
var resourceARNPattern = newPattern(`^arn:aws[a-z\-]*:sagemaker:[a-z0-9\-]*:[0-9]{12}:.+$`)

const maxResourceARN = 256

// minListTagsResults is ListTags' lowest MaxResults (its page: 50-100).
const minListTagsResults = 50

func (v *violations) checkResourceARN(arn *string) {
	if v.required(arn != nil, "resourceArn") {
		v.str(*arn, "resourceArn", 0, maxResourceARN, &resourceARNPattern)
	}
}

// checkTagKeys: TagKeys of API_DeleteTags.html, 1 to maxTags keys, each as a Tag's Key.
func (v *violations) checkTagKeys(keys []string) {
	if !v.required(keys != nil, "tagKeys") {
		return
	}
	if len(keys) == 0 {
		v.add("[0 items]", "tagKeys", "have length greater than or equal to 1")
	}
	v.listLen(len(keys), "tagKeys", maxTags)
	for i, k := range keys {
		v.str(k, member("tagKeys", i), 1, maxTagKey, &tagPattern)
	}
}

// reservedTagKey says a key is in the prefix AWS keeps for its own tags: "You can't use the
// aws: prefix in your tag names or values because it is reserved for AWS use"
// (https://docs.aws.amazon.com/tag-editor/latest/userguide/best-practices-and-strats.html).
// SageMaker's answer to one is not documented: a ValidationException is the emulator's choice.
func reservedTagKey(k string) bool { return strings.HasPrefix(strings.ToLower(k), "aws:") }

// resourceLimit is the model's ResourceLimitExceeded (AddTags' documented error).
func resourceLimit(msg string) *apiError {
	return &apiError{http.StatusBadRequest, "ResourceLimitExceeded", msg}
}

// taggedRecord finds the quota or scheduler config of arn. Callers hold mu. An ARN the account
// has no such object of is ResourceNotFound (emulator's choice: the pages document none).
func (e *Emulator) taggedRecord(arn string) (*Record, *apiError) {
	for _, ent := range e.quotas.entries {
		if ent.obj.ARN == arn {
			return &ent.obj.Record, nil
		}
	}
	for _, ent := range e.configs.entries {
		if ent.obj.ARN == arn {
			return &ent.obj.Record, nil
		}
	}
	return nil, notFound("The resource %s does not exist.", arn)
}

// onTagged runs do on the quota or scheduler config of arn, holding mu.
func onTagged[T any](e *Emulator, arn string, do func(*Record) (T, *apiError)) (T, *apiError) {
	e.mu.Lock()
	defer e.mu.Unlock()
	r, aerr := e.taggedRecord(arn)
	if aerr != nil {
		var zero T
		return zero, aerr
	}
	return do(r)
}

// setTags gives r the tags: a key it has takes the new value in place, a new key is added after
// the others. More than maxTags in all is ResourceLimitExceeded.
func setTags(r *Record, tags []Tag) *apiError {
	out := slices.Clone(r.Tags)
	for _, t := range tags {
		i := slices.IndexFunc(out, func(o Tag) bool { return *o.Key == *t.Key })
		if i >= 0 {
			out[i].Value = t.Value
			continue
		}
		out = append(out, Tag{Key: t.Key, Value: t.Value})
	}
	if len(out) > maxTags {
		return resourceLimit("A resource can have at most " + strconv.Itoa(maxTags) + " tags; this request would give it " + strconv.Itoa(len(out)) + ".")
	}
	r.Tags = out
	return nil
}

// taggedResource is the member every tag operation names its resource by, embedded in each
// operation's input.
type taggedResource struct {
	ResourceArn *string `json:"ResourceArn"`
}

func (t *taggedResource) resource() *taggedResource { return t }

// tagInput is the input of a tag operation.
type tagInput interface{ resource() *taggedResource }

// tagOperation decodes body into in and checks it as the API checks it (the ResourceArn, then the
// rest with check), and runs do on the quota or scheduler config the ARN names, holding mu.
func tagOperation(e *Emulator, body []byte, in tagInput, check func(*violations),
	do func(*Record) (any, *apiError)) (any, *apiError) {
	res := in.resource()
	if err := decodeChecked(body, in, func(v *violations) {
		v.checkResourceARN(res.ResourceArn)
		check(v)
	}); err != nil {
		return nil, err
	}
	return onTagged(e, *res.ResourceArn, do)
}

func (e *Emulator) addTags(_ context.Context, body []byte) (any, *apiError) {
	var in struct {
		taggedResource
		Tags []Tag `json:"Tags"`
	}
	return tagOperation(e, body, &in, func(v *violations) { v.checkTags(in.Tags, true) }, func(r *Record) (any, *apiError) {
		if aerr := setTags(r, in.Tags); aerr != nil {
			return nil, aerr
		}
		return map[string]any{"Tags": tagsOut(r.Tags)}, nil
	})
}

func (e *Emulator) deleteTags(_ context.Context, body []byte) (any, *apiError) {
	var in struct {
		taggedResource
		TagKeys []string `json:"TagKeys"`
	}
	return tagOperation(e, body, &in, func(v *violations) { v.checkTagKeys(in.TagKeys) }, func(r *Record) (any, *apiError) {
		// A key the resource does not have is ignored (permissive: the page documents no error).
		r.Tags = slices.DeleteFunc(slices.Clone(r.Tags), func(t Tag) bool { return slices.Contains(in.TagKeys, *t.Key) })
		return struct{}{}, nil
	})
}

func (e *Emulator) listTags(_ context.Context, body []byte) (any, *apiError) {
	var in struct {
		taggedResource
		MaxResults *int32  `json:"MaxResults"`
		NextToken  *string `json:"NextToken"`
	}
	return tagOperation(e, body, &in, func(v *violations) {
		inRange(v, in.MaxResults, "maxResults", minListTagsResults, maxListResults)
		v.optionalStr(in.NextToken, "nextToken", 0, maxNextToken, nil)
	}, func(r *Record) (any, *apiError) { return tagsPage(r.Tags, in.NextToken, in.MaxResults) })
}

// tagsPage is the ListTags answer of one page of tags.
func tagsPage(tags []Tag, nextToken *string, maxResults *int32) (any, *apiError) {
	// The token is the offset of the page's first tag (emulator's choice); the page size
	// without MaxResults is the lowest allowed (AWS documents no default).
	start := 0
	if nextToken != nil {
		n, err := strconv.Atoi(*nextToken)
		if err != nil || n < 0 || n > len(tags) {
			return nil, validationError("The NextToken " + strconv.Quote(*nextToken) + " is not valid.")
		}
		start = n
	}
	size := minListTagsResults
	if maxResults != nil {
		size = int(*maxResults)
	}
	end := min(start+size, len(tags))
	out := map[string]any{"Tags": tagsOut(tags[start:end])}
	if end < len(tags) {
		out["NextToken"] = strconv.Itoa(end)
	}
	return out, nil
}

// tagsOut is a list of tags as an answer carries it: never null.
func tagsOut(tags []Tag) []Tag {
	return append([]Tag{}, tags...)
}

// SetTags replaces the tags of the quota or scheduler config of arn as someone else would with
// AddTags and DeleteTags: checked as the API checks them, the version left as it is.
func (e *Emulator) SetTags(arn string, tags map[string]string) error {
	list := make([]Tag, 0, len(tags))
	for _, k := range slices.Sorted(maps.Keys(tags)) {
		list = append(list, Tag{Key: ptrTo(k), Value: ptrTo(tags[k])})
	}
	var v violations
	v.checkTags(list, false)
	if aerr := v.err(); aerr != nil {
		return aerr
	}
	if _, aerr := onTagged(e, arn, func(r *Record) (struct{}, *apiError) {
		r.Tags = list
		return struct{}{}, nil
	}); aerr != nil {
		return aerr
	}
	return nil
}

// TagsOf returns the tags of the quota or scheduler config of arn as stored now.
func (e *Emulator) TagsOf(arn string) (map[string]string, error) {
	tags, aerr := onTagged(e, arn, func(r *Record) (map[string]string, *apiError) {
		out := map[string]string{}
		for _, t := range r.Tags {
			out[*t.Key] = *t.Value
		}
		return out, nil
	})
	if aerr != nil {
		return nil, aerr
	}
	return tags, nil
}

func ptrTo[T any](v T) *T { return &v }
