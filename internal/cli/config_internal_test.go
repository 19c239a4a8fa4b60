package cli

import (
	"testing"

	"podium.dev/podium/internal/cli/hub"
)

// TestNoHomeIsAnEmptyConfig: a run's container often has no $HOME; the CLI must still
// start and use the Pod's in-cluster configuration (docs/verified-rows.md) rather than
// fail on the login config it cannot locate.
func TestNoHomeIsAnEmptyConfig(t *testing.T) {
	t.Setenv("HOME", "")
	t.Setenv("XDG_CONFIG_HOME", "")
	cfg, err := loadConfig()
	if err != nil {
		t.Fatalf("loadConfig without a home: %v", err)
	}
	if *cfg != (loginConfig{}) {
		t.Fatalf("config = %+v, want empty", *cfg)
	}
	a := &app{flags: hub.Options{}}
	if _, err := a.options(); err != nil {
		t.Fatalf("options without a home: %v", err)
	}
}
