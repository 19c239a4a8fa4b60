package hub

import (
	"testing"
	"time"

	metav1 "k8s.io/apimachinery/pkg/apis/meta/v1"

	hubv1alpha1 "podium.dev/podium/api/v1alpha1"
)

// TestRowsShowTheirRecordedID: after a restore a row's UID is new, its recorded id and
// creation time are not (docs/operations.md, "Backup and restore"); the CLI prints and
// exports the recorded ones, as the HTTP read serves them.
func TestRowsShowTheirRecordedID(t *testing.T) {
	restored := &hubv1alpha1.LeaderboardRow{ObjectMeta: metav1.ObjectMeta{
		UID:               "11111111-1111-4111-8111-111111111111",
		CreationTimestamp: metav1.NewTime(time.Date(2026, 11, 26, 12, 0, 0, 0, time.UTC)),
		Annotations: map[string]string{
			hubv1alpha1.AnnotationID:        "22222222-2222-4222-8222-222222222222",
			hubv1alpha1.AnnotationCreatedAt: "2026-01-02T03:04:05Z",
		},
	}}
	j := RowToJSON("board", RankedRow{Row: restored})
	if j.ID != "22222222-2222-4222-8222-222222222222" {
		t.Errorf("--json id = %s, want the recorded id", j.ID)
	}
	if j.CreatedAt != "2026-01-02T03:04:05Z" {
		t.Errorf("--json created_at = %s, want the recorded time", j.CreatedAt)
	}
	if f := RowFileFromObject(restored); f.ID != "22222222-2222-4222-8222-222222222222" {
		t.Errorf("export id = %s, want the recorded id", f.ID)
	}
}
