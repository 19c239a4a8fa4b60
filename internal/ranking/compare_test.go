package ranking

import (
	"testing"

	"github.com/google/go-cmp/cmp"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

const (
	asc   = hubv1alpha1.Ascending
	desc  = hubv1alpha1.Descending
	first = hubv1alpha1.NullsFirst
	last  = hubv1alpha1.NullsLast
)

func TestSortRules(t *testing.T) {
	tests := []struct {
		name  string
		rules []hubv1alpha1.RankRule
		rows  []*hubv1alpha1.LeaderboardRow
		want  []string
	}{{
		name:  "ascending puts the lowest first",
		rules: []hubv1alpha1.RankRule{rule("metrics.cost", asc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("a", 0, `{"cost": 3}`, ""),
			testRow("b", 1, `{"cost": 1.5}`, ""),
			testRow("c", 2, `{"cost": -2}`, ""),
		},
		want: []string{"1 c", "2 b", "3 a"},
	}, {
		name:  "descending puts the highest first",
		rules: []hubv1alpha1.RankRule{rule("metrics.reward", desc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("a", 0, `{"reward": 0.2}`, ""),
			testRow("b", 1, `{"reward": 0.9}`, ""),
			testRow("c", 2, `{"reward": 10}`, ""),
		},
		want: []string{"1 c", "2 b", "3 a"},
	}, {
		name:  "missing and null values go last ascending",
		rules: []hubv1alpha1.RankRule{rule("metrics.reward", asc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("null", 0, `{"reward": null}`, ""),
			testRow("absent", 1, `{"other": 1}`, ""),
			testRow("nometrics", 2, "", ""),
			testRow("one", 3, `{"reward": 1}`, ""),
			testRow("two", 4, `{"reward": 2}`, ""),
		},
		want: []string{"1 one", "2 two", "3 null", "3 absent", "3 nometrics"},
	}, {
		name:  "missing values go last descending too",
		rules: []hubv1alpha1.RankRule{rule("metrics.reward", desc, last)},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("null", 0, `{"reward": null}`, ""),
			testRow("one", 1, `{"reward": 1}`, ""),
			testRow("two", 2, `{"reward": 2}`, ""),
		},
		want: []string{"1 two", "2 one", "3 null"},
	}, {
		name:  "nulls first puts missing values first ascending",
		rules: []hubv1alpha1.RankRule{rule("metrics.reward", asc, first)},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("one", 0, `{"reward": 1}`, ""),
			testRow("null", 1, `{"reward": null}`, ""),
			testRow("zero", 2, `{"reward": 0}`, ""),
		},
		want: []string{"1 null", "2 zero", "3 one"},
	}, {
		name:  "nulls first puts missing values first descending",
		rules: []hubv1alpha1.RankRule{rule("metrics.reward", desc, first)},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("one", 0, `{"reward": 1}`, ""),
			testRow("absent", 1, `{}`, ""),
			testRow("zero", 2, `{"reward": 0}`, ""),
		},
		want: []string{"1 absent", "2 one", "3 zero"},
	}, {
		name:  "booleans count as 0 and 1",
		rules: []hubv1alpha1.RankRule{rule("metrics.solved", desc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("false", 0, `{"solved": false}`, ""),
			testRow("half", 1, `{"solved": 0.5}`, ""),
			testRow("true", 2, `{"solved": true}`, ""),
			testRow("one", 3, `{"solved": 1}`, ""),
			testRow("zero", 4, `{"solved": 0}`, ""),
		},
		want: []string{"1 true", "1 one", "3 half", "4 false", "4 zero"},
	}, {
		name:  "strings compare case-insensitively",
		rules: []hubv1alpha1.RankRule{rule("metadata.agent", asc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("bob", 0, "", `{"agent": "bob"}`),
			testRow("Alice", 1, "", `{"agent": "Alice"}`),
			testRow("carol", 2, "", `{"agent": "Carol"}`),
			testRow("alice", 3, "", `{"agent": "alice"}`),
			testRow("ALICE", 4, "", `{"agent": "ÄLICE"}`),
		},
		want: []string{"1 Alice", "1 alice", "3 bob", "4 carol", "5 ALICE"},
	}, {
		name:  "numbers among strings compare as strings",
		rules: []hubv1alpha1.RankRule{rule("metrics.score", asc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("nine", 0, `{"score": 9}`, ""),
			testRow("ten", 1, `{"score": 10}`, ""),
			testRow("five", 2, `{"score": "5"}`, ""),
			testRow("tentext", 3, `{"score": "10"}`, ""),
			testRow("b", 4, `{"score": "B"}`, ""),
			testRow("small", 5, `{"score": 1e-7}`, ""),
			testRow("true", 6, `{"score": true}`, ""),
		},
		// "1" < "10" = "10" < "1e-7" < "5" < "9" < "b"
		want: []string{"1 true", "2 ten", "2 tentext", "4 small", "5 five", "6 nine", "7 b"},
	}, {
		name:  "numbers alone compare as numbers",
		rules: []hubv1alpha1.RankRule{rule("metrics.score", asc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("nine", 0, `{"score": 9}`, ""),
			testRow("ten", 1, `{"score": 10}`, ""),
			testRow("null", 2, `{"score": null}`, ""),
		},
		want: []string{"1 nine", "2 ten", "3 null"},
	}, {
		name:  "nested accessors read nested objects",
		rules: []hubv1alpha1.RankRule{rule("metrics.a.b", desc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("low", 0, `{"a": {"b": 1}}`, ""),
			testRow("high", 1, `{"a": {"b": 7}}`, ""),
			testRow("scalar", 2, `{"a": 9}`, ""),
			testRow("deep", 3, `{"a": {"b": {"c": 8}}}`, ""),
		},
		want: []string{"1 high", "2 low", "3 scalar", "3 deep"},
	}, {
		name:  "a literal dotted key wins over nesting",
		rules: []hubv1alpha1.RankRule{rule("metrics.a.b.c", desc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("literal", 0, `{"a.b.c": 1, "a": {"b": {"c": 100}}}`, ""),
			testRow("partial", 1, `{"a.b": {"c": 2}, "a": {"b.c": 50}}`, ""),
			testRow("inner", 2, `{"a": {"b.c": 3}}`, ""),
			testRow("nested", 3, `{"a": {"b": {"c": 4}}}`, ""),
			testRow("notobject", 4, `{"a.b": 7, "a": {"b": {"c": 5}}}`, ""),
		},
		want: []string{"1 notobject", "2 nested", "3 inner", "4 partial", "5 literal"},
	}, {
		name:  "objects and arrays count as missing",
		rules: []hubv1alpha1.RankRule{rule("metrics.x", asc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("object", 0, `{"x": {"y": 1}}`, ""),
			testRow("array", 1, `{"x": [1]}`, ""),
			testRow("number", 2, `{"x": 5}`, ""),
		},
		want: []string{"1 number", "2 object", "2 array"},
	}, {
		name:  "ties share a competition rank",
		rules: []hubv1alpha1.RankRule{rule("metrics.reward", desc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("a", 0, `{"reward": 1}`, ""),
			testRow("b", 1, `{"reward": 0.5}`, ""),
			testRow("c", 2, `{"reward": 0.5}`, ""),
			testRow("d", 3, `{"reward": 0.1}`, ""),
		},
		want: []string{"1 a", "2 b", "2 c", "4 d"},
	}, {
		name:  "later rules break ties",
		rules: []hubv1alpha1.RankRule{rule("metrics.reward", desc, ""), rule("metrics.cost", asc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("expensive", 0, `{"reward": 1, "cost": 5}`, ""),
			testRow("cheap", 1, `{"reward": 1, "cost": 2}`, ""),
			testRow("nocost", 2, `{"reward": 1}`, ""),
			testRow("best", 3, `{"reward": 2, "cost": 9}`, ""),
			testRow("twin", 4, `{"reward": 1, "cost": 2}`, ""),
		},
		want: []string{"1 best", "2 cheap", "2 twin", "4 expensive", "5 nocost"},
	}, {
		name:  "a tie is ordered by creation time, then by id",
		rules: []hubv1alpha1.RankRule{rule("metrics.reward", desc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("z-late", 9, `{"reward": 1}`, ""),
			testRow("y", 5, `{"reward": 1}`, ""),
			testRow("x", 5, `{"reward": 1}`, ""),
			testRow("w-early", 1, `{"reward": 1}`, ""),
		},
		want: []string{"1 w-early", "1 x", "1 y", "1 z-late"},
	}, {
		name: "without rules rows rank in creation order",
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("third", 3, `{"reward": 9}`, ""),
			testRow("first", 1, `{"reward": 1}`, ""),
			testRow("second-b", 2, "", ""),
			testRow("second-a", 2, "", ""),
		},
		want: []string{"1 first", "2 second-a", "3 second-b", "4 third"},
	}, {
		name:  "metadata and metrics are separate roots",
		rules: []hubv1alpha1.RankRule{rule("metadata.reward", desc, "")},
		rows: []*hubv1alpha1.LeaderboardRow{
			testRow("metrics", 0, `{"reward": 100}`, `{}`),
			testRow("metadata", 1, `{}`, `{"reward": 1}`),
		},
		want: []string{"1 metadata", "2 metrics"},
	}, {
		name:  "an empty batch ranks nothing",
		rules: []hubv1alpha1.RankRule{rule("metrics.reward", desc, "")},
		want:  []string{},
	}}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			got := ranks(Sort(tc.rules, tc.rows))
			if diff := cmp.Diff(tc.want, got); diff != "" {
				t.Errorf("Sort() (-want +got):\n%s", diff)
			}
		})
	}
}

func TestNumberText(t *testing.T) {
	tests := []struct {
		in   float64
		want string
	}{
		{0, "0"}, {1, "1"}, {-1.5, "-1.5"}, {0.1, "0.1"}, {1e20, "100000000000000000000"},
		{1e21, "1e+21"}, {0.000001, "0.000001"}, {1e-7, "1e-7"}, {1.5e-10, "1.5e-10"},
		{-2e-300, "-2e-300"}, {123456789.125, "123456789.125"},
	}
	for _, tc := range tests {
		if got := string(numberText(nil, tc.in)); got != tc.want {
			t.Errorf("numberText(%v) = %q, want %q", tc.in, got, tc.want)
		}
	}
}

func TestKeyOfIgnoresBadInput(t *testing.T) {
	rules := []hubv1alpha1.RankRule{
		rule("metrics.a", asc, ""), rule("nowhere.a", asc, ""), rule("metrics.", asc, ""),
		rule("metadata.a", asc, ""), rule("metrics.big", asc, ""),
	}
	row := testRow("r", 0, `{"a": 1, "big": 1e999}`, `not json`)
	got := keyOf(rules, row)
	want := []value{{k: number, n: 1}, {}, {}, {}, {}}
	if diff := cmp.Diff(want, got, cmp.AllowUnexported(value{})); diff != "" {
		t.Errorf("keyOf() (-want +got):\n%s", diff)
	}
}
