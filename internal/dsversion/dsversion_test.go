package dsversion

import (
	"testing"
	"time"

	"github.com/google/go-cmp/cmp"
	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

func version(id, tag string, hour int) hubv1alpha1.DatasetVersion {
	t0 := time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)
	return hubv1alpha1.DatasetVersion{ID: id, Tag: tag, CreatedAt: metav1.NewTime(t0.Add(time.Duration(hour) * time.Hour))}
}

func TestNewestTieBreaksByID(t *testing.T) {
	v := []hubv1alpha1.DatasetVersion{version("b", "x", 3), version("a", "y", 3), version("c", "z", 1)}
	if got := Newest(v).ID; got != "b" {
		t.Errorf("Newest = %q, want b", got)
	}
	if Newest(nil) != nil {
		t.Error("Newest(nil) != nil")
	}
	if diff := cmp.Diff([]string{"c", "a", "b"}, IDsByAge(v)); diff != "" {
		t.Errorf("IDsByAge (-want +got):\n%s", diff)
	}
}

func TestFind(t *testing.T) {
	versions := []hubv1alpha1.DatasetVersion{
		version("00000000-0000-0000-0000-000000000001", "1.0", 0),
		version("00000000-0000-0000-0000-000000000003", "3.0", 2),
		version("00000000-0000-0000-0000-00000000000b", "2.0", 1),
	}
	for ref, want := range map[string]string{
		"latest": "3.0", "": "3.0", "1.0": "1.0", "00000000-0000-0000-0000-00000000000B": "2.0",
		"00000000-0000-0000-0000-00000000000a": "", "4.0": "",
	} {
		got := ""
		if v := Find(ref, versions); v != nil {
			got = v.Tag
		}
		if got != want {
			t.Errorf("Find(%q) = %q, want %q", ref, got, want)
		}
	}
	if Find(Latest, nil) != nil {
		t.Error("latest of a dataset without versions resolved")
	}
	if ByRef("00000000-0000-0000-0000-000000000001", versions) != nil {
		t.Error("a board's ref named a version by id: refs are latest or a tag")
	}
}
