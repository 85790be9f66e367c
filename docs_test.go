package main

import (
	"os"
	"path/filepath"
	"regexp"
	"slices"
	"strings"
	"testing"
)

// Mechanical checks of the generated documentation in docs/ (make docs): it follows the
// registry's conventions, speaks to users rather than about the project, and quotes no measured
// figure that the results file it names does not hold.

// docPages reads the Markdown pages of a docs/ folder, keyed by file name.
func docPages(t *testing.T, dir string) map[string]string {
	t.Helper()
	paths, err := filepath.Glob(filepath.Join("docs", dir, "*.md"))
	if err != nil {
		t.Fatal(err)
	}
	if len(paths) == 0 {
		t.Fatalf("no pages in docs/%s", dir)
	}
	pages := map[string]string{}
	for _, p := range paths {
		b, err := os.ReadFile(p)
		if err != nil {
			t.Fatal(err)
		}
		pages[filepath.Base(p)] = string(b)
	}
	return pages
}

var (
	fencedBlock = regexp.MustCompile("(?ms)^[ \t]*```.*?^[ \t]*```[ \t]*$")
	htmlComment = regexp.MustCompile(`(?s)<!--.*?-->`)
	inlineCode  = regexp.MustCompile("`[^`\n]*`")
)

// prose is what a reader sees of a page as text: without code blocks and HTML comments.
func prose(page string) string {
	return htmlComment.ReplaceAllString(fencedBlock.ReplaceAllString(page, ""), "")
}

// Every guide is linked from the provider's index page, which is how the registry lists them.
func TestDocsIndexLinksEveryGuide(t *testing.T) {
	index, err := os.ReadFile(filepath.Join("docs", "index.md"))
	if err != nil {
		t.Fatal(err)
	}
	for name := range docPages(t, "guides") {
		if !strings.Contains(string(index), "](guides/"+name+")") && !strings.Contains(string(index), "](guides/"+name+"#") {
			t.Errorf("docs/index.md does not link the guide %s: add it to templates/index.md.tmpl", name)
		}
	}
}

// projectWords name the project's own machinery, which a user of the provider has no use for.
var projectWords = regexp.MustCompile(`\bTest[A-Z_][A-Za-z0-9_]*|_test\.go|\binternal/`)

// Guides speak to users: they name no Go test, test file or internal package. What proves a
// guide belongs in CONTRIBUTING.md, how the code is built in ARCHITECTURE.md.
func TestDocsGuidesSpeakToUsers(t *testing.T) {
	for name, page := range docPages(t, "guides") {
		for _, m := range projectWords.FindAllString(htmlComment.ReplaceAllString(page, ""), -1) {
			t.Errorf("docs/guides/%s names %q: move what is about the project to CONTRIBUTING.md or ARCHITECTURE.md", name, m)
		}
	}
}

var heading = regexp.MustCompile(`(?m)^(#{1,6}) (.+?)\s*$`)

// headings are a page's headings of level 2, in order, outside code blocks.
func headings(page string) []string {
	var out []string
	for _, m := range heading.FindAllStringSubmatch(fencedBlock.ReplaceAllString(page, ""), -1) {
		if m[1] == "##" {
			out = append(out, m[2])
		}
	}
	return out
}

// Resource and data source pages have the registry's sections, in the aws provider's order:
// Example Usage, the generated Schema (arguments and attributes), Timeouts where the schema has a
// timeouts block, and Import for resources.
func TestDocsResourcePagesHaveTheirSections(t *testing.T) {
	check := func(dir string, want []string) {
		for name, page := range docPages(t, dir) {
			want := want
			if strings.Contains(page, `id="nestedblock--timeouts"`) {
				want = append(slices.Clone(want[:2]), append([]string{"Timeouts"}, want[2:]...)...)
			}
			var got []string
			for _, h := range headings(page) {
				if slices.Contains(want, h) {
					got = append(got, h)
				}
			}
			if !slices.Equal(got, want) {
				t.Errorf("docs/%s/%s has the sections %q, want %q in this order", dir, name, got, want)
			}
		}
	}
	check("resources", []string{"Example Usage", "Schema", "Import"})
	check("data-sources", []string{"Example Usage", "Schema"})
}

// A measured figure: a number (or a range of two) with the unit of a time, a request count, a
// memory size or a ratio, as the benchmark's results files report them. Instance sizes (vCPU,
// GiB, GPUs), amounts in examples and versions carry none of these units, and are not figures.
var measured = regexp.MustCompile(`(?:^|[^\w.])(\d[\d,]*(?:\.\d+)?)(?:\s*(?:-|to)\s*(\d[\d,]*(?:\.\d+)?))?` +
	`(?:\s+(?:ms|s|seconds|minutes|MB|times|requests|GETs|LISTs)\b|x\b)`)

// notMeasured are figures that are settings or arithmetic on settings, not measurements; each
// is matched in the prose (code spans removed) and taken out before figures are looked for.
var notMeasured = []*regexp.Regexp{
	// The admission preview's budget per plan, a constant of the provider.
	regexp.MustCompile(`\b10 s(?:econds)?\b`),
	// The retry block's defaults and what follows from them: max_elapsed, the chance that ten
	// attempts all fail at a 30 % failure rate, the resulting give-up time, and 409 backoffs.
	regexp.MustCompile(`\(2\s+minutes\)`),
	regexp.MustCompile(`\b\d+ requests in a million\b`),
	regexp.MustCompile(`\b\d+ to \d+ seconds after its\s+first attempt\b`),
	regexp.MustCompile(`\b\d+, \d+ and \d+ ms apart\b`),
	// The failure-recovery guide's example retry settings, the provider's cleanup bound after an
	// interrupt, and OpenTofu's own interval for saving state.
	regexp.MustCompile(`\bfit in \d+ seconds\b`),
	regexp.MustCompile(`\bwithin \d+ seconds\b`),
	regexp.MustCompile(`\bevery \d+ seconds or more\b`),
	// client-go's default rate limit.
	regexp.MustCompile(`\bdefault of \d+ requests\s+per second\b`),
}

var resultsFile = regexp.MustCompile(`bench/results/(?:[\w.-]+/)?[\w.-]+\.md`)

// tableUnits are the column headers of a table of measured figures; every number of such a
// column counts as a figure.
var tableUnits = regexp.MustCompile(`\((?:s|MB)\)|\brequests\b`)

// figures are the measured figures of a page's prose and tables.
func figures(page string) []string {
	text := inlineCode.ReplaceAllString(prose(page), "")
	for _, re := range notMeasured {
		text = re.ReplaceAllString(text, "")
	}
	var out []string
	for _, m := range measured.FindAllStringSubmatch(text, -1) {
		out = append(out, m[1])
		if m[2] != "" {
			out = append(out, m[2])
		}
	}
	return append(out, tableFigures(text)...)
}

var number = regexp.MustCompile(`^\d[\d,]*(?:\.\d+)?$`)

// tableFigures are the numbers in the columns of Markdown tables whose header names a unit of
// tableUnits.
func tableFigures(text string) []string {
	var out []string
	var measuredColumns []bool
	for _, line := range strings.Split(text, "\n") {
		line = strings.TrimSpace(line)
		if !strings.HasPrefix(line, "|") {
			measuredColumns = nil
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if measuredColumns == nil { // the header row
			measuredColumns = make([]bool, len(cells))
			for i, c := range cells {
				measuredColumns[i] = tableUnits.MatchString(c)
			}
			continue
		}
		for i, c := range cells {
			if i >= len(measuredColumns) || !measuredColumns[i] {
				continue
			}
			for _, f := range strings.FieldsFunc(c, func(r rune) bool { return r == ' ' || r == '/' || r == '*' }) {
				if number.MatchString(f) {
					out = append(out, f)
				}
			}
		}
	}
	return out
}

// Every measured figure a guide (or the index) quotes comes from a results file of the
// benchmark that the page names, so a figure can always be traced to its run; a page that names
// none quotes none.
func TestDocsFiguresComeFromNamedResults(t *testing.T) {
	pages := docPages(t, "guides")
	index, err := os.ReadFile(filepath.Join("docs", "index.md"))
	if err != nil {
		t.Fatal(err)
	}
	pages["../index.md"] = string(index)
	for name, page := range pages {
		named := resultsFile.FindAllString(page, -1)
		slices.Sort(named)
		named = slices.Compact(named)
		var results []string
		for _, file := range named {
			b, err := os.ReadFile(file)
			if err != nil {
				t.Errorf("docs/guides/%s names %s, which does not exist: %v", name, file, err)
				continue
			}
			results = append(results, string(b))
		}
		for _, f := range figures(page) {
			if !quoted(results, strings.ReplaceAll(f, ",", "")) {
				t.Errorf("docs/guides/%s quotes %s, which no results file it names holds (it names %q)", name, f, named)
			}
		}
	}
}

// quoted reports whether a figure appears in one of the results files as a number of its own.
func quoted(results []string, figure string) bool {
	re := regexp.MustCompile(`(?:^|[^\d.])` + regexp.QuoteMeta(figure) + `(?:$|[^\d]|\.[^\d])`)
	for _, r := range results {
		if re.MatchString(strings.ReplaceAll(r, ",", "")) {
			return true
		}
	}
	return false
}

// The figure checks find what they are meant to find.
func TestDocsFigures(t *testing.T) {
	page := "A plan took 11.89 s (0.96-1.01 s at 100 teams), 56 requests, 2.41x its floor and 146.3 MB; " +
		"`30s` is a setting, so are 10 seconds. The preview grew 14 times.\n\n" +
		"| shape | wall (s) | vcpu |\n|---|---:|---:|\n| module | **11.89** | 96 |\n\n```\n99.99 s\n```\n"
	got := figures(page)
	want := []string{"11.89", "0.96", "1.01", "56", "2.41", "146.3", "14", "11.89"}
	if !slices.Equal(got, want) {
		t.Errorf("figures = %q, want %q", got, want)
	}
	results := []string{"| module | plan-noop | 11.89 | 21.88 |\n0.96 and 1.01, 56, 2.41x, 146.3 MB, 14"}
	for _, f := range want {
		if !quoted(results, f) {
			t.Errorf("%s is in the results, but quoted says it is not", f)
		}
	}
	for _, f := range []string{"1.89", "11.8", "21.8", "6"} {
		if quoted(results, f) {
			t.Errorf("%s is not a number of the results, but quoted says it is", f)
		}
	}
}

var (
	quotaBlock = regexp.MustCompile(`(?m)^resource "hyperpod_compute_quota" "\w+" \{`)
	hclComment = regexp.MustCompile(`(?m)#.*$`)
	strategy   = regexp.MustCompile(`\bstrategy\s*=\s*"(\w+)"`)
	weight     = regexp.MustCompile(`\bfair_share_weight\s*=\s*(\S+)`)
)

// examplesBorrowingAsWritten are example directories whose quotas describe queues as someone else
// wrote them, at weight 0 (AWS's own walkthroughs create quotas with FairShareWeight=0): the
// adopting guide imports them as they are.
var examplesBorrowingAsWritten = []string{"examples/guides/adopting-existing-queues/"}

// Every example quota that borrows (LendAndBorrow, the default strategy) sets fair_share_weight,
// and not to 0: the advice of the quotas-and-kueue guide's fair-sharing section, which the
// examples follow.
func TestExamplesGiveBorrowersAWeight(t *testing.T) {
	var files []string
	err := filepath.WalkDir("examples", func(path string, d os.DirEntry, err error) error {
		if err == nil && !d.IsDir() && (strings.HasSuffix(path, ".tf") || strings.HasSuffix(path, ".hcl")) &&
			!slices.ContainsFunc(examplesBorrowingAsWritten, func(dir string) bool { return strings.HasPrefix(filepath.ToSlash(path), dir) }) {
			files = append(files, path)
		}
		return err
	})
	if err != nil {
		t.Fatal(err)
	}
	quotas := 0
	for _, file := range files {
		b, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		src := hclComment.ReplaceAllString(string(b), "")
		for _, loc := range quotaBlock.FindAllStringIndex(src, -1) {
			quotas++
			body := block(src[loc[1]:])
			s := strategy.FindStringSubmatch(body)
			if s != nil && s[1] != "LendAndBorrow" {
				continue
			}
			if w := weight.FindStringSubmatch(body); w == nil || w[1] == "0" {
				t.Errorf("%s: %s borrows but leaves fair_share_weight at 0: give it at least 1 (docs/guides/quotas-and-kueue.md)",
					file, strings.TrimSuffix(src[loc[0]:loc[1]], " {"))
			}
		}
	}
	if quotas == 0 {
		t.Fatal("no hyperpod_compute_quota in examples/")
	}
}

// block is the body of the block whose opening brace src follows, up to its closing brace.
func block(src string) string {
	depth := 1
	for i, r := range src {
		switch r {
		case '{':
			depth++
		case '}':
			if depth--; depth == 0 {
				return src[:i]
			}
		}
	}
	return src
}
