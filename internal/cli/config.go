package cli

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"

	"sigs.k8s.io/yaml"
)

// loginConfig is what `auth login` records: which cluster (kubeconfig and context),
// the default org and Podium's HTTP endpoint. It holds no credential: those stay in the
// kubeconfig.
type loginConfig struct {
	Kubeconfig string `json:"kubeconfig,omitempty"`
	Context    string `json:"context,omitempty"`
	Org        string `json:"org,omitempty"`
	Endpoint   string `json:"endpoint,omitempty"`
}

// configPath is $XDG_CONFIG_HOME/podium/config.yaml (XDG's default ~/.config).
func configPath() (string, error) {
	dir := os.Getenv("XDG_CONFIG_HOME")
	if dir == "" {
		home, err := os.UserHomeDir()
		if err != nil {
			return "", fmt.Errorf("finding the config directory: %w", err)
		}
		dir = filepath.Join(home, ".config")
	}
	return filepath.Join(dir, "podium", "config.yaml"), nil
}

// loadConfig reads the login config; a missing file is an empty config, and so is a
// missing home directory (a container without $HOME, such as a run writing its row
// with the Pod's in-cluster configuration: docs/verified-rows.md).
func loadConfig() (*loginConfig, error) {
	path, err := configPath()
	if err != nil {
		return &loginConfig{}, nil // no home: nothing was recorded
	}
	raw, err := os.ReadFile(path)
	if errors.Is(err, os.ErrNotExist) {
		return &loginConfig{}, nil
	}
	if err != nil {
		return nil, fmt.Errorf("reading %s: %w", path, err)
	}
	var c loginConfig
	if err := yaml.UnmarshalStrict(raw, &c); err != nil {
		return nil, fmt.Errorf("%s: %w (fix it or run `podium auth logout`)", path, err)
	}
	return &c, nil
}

// saveConfig writes the login config, readable only by the user (0600).
func saveConfig(c *loginConfig) (string, error) {
	path, err := configPath()
	if err != nil {
		return "", err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o700); err != nil {
		return "", fmt.Errorf("creating %s: %w", filepath.Dir(path), err)
	}
	raw, err := yaml.Marshal(c)
	if err != nil {
		return "", err
	}
	tmp, err := os.CreateTemp(filepath.Dir(path), ".config-*")
	if err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	defer os.Remove(tmp.Name())
	// CreateTemp makes the file 0600 already; Chmod states it.
	if err := tmp.Chmod(0o600); err != nil {
		tmp.Close()
		return "", err
	}
	if _, err := tmp.Write(raw); err != nil {
		tmp.Close()
		return "", err
	}
	if err := tmp.Close(); err != nil {
		return "", err
	}
	if err := os.Rename(tmp.Name(), path); err != nil {
		return "", fmt.Errorf("writing %s: %w", path, err)
	}
	return path, nil
}
