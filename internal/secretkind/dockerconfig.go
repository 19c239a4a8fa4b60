package secretkind

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"strings"
)

// DockerConfigJSON is the .dockerconfigjson of one registry account, the format the
// kubelet reads from an imagePullSecret: {"auths": {server: {username, password,
// auth}}} with auth = base64("username:password").
func DockerConfigJSON(server, username, password string) ([]byte, error) {
	type entry struct {
		Username string `json:"username"`
		Password string `json:"password"`
		Auth     string `json:"auth"`
	}
	auth := base64.StdEncoding.EncodeToString([]byte(username + ":" + password))
	b, err := json.Marshal(map[string]map[string]entry{"auths": {server: {username, password, auth}}})
	if err != nil {
		// Marshalling strings cannot fail; never wrap err, whatever it says.
		return nil, errors.New("encoding a registry credential failed")
	}
	return b, nil
}

// RegistryPassword returns the password of server's entry in a .dockerconfigjson (its
// password field, else the part of auth after the first ':'). ok is false when there
// is none or the document cannot be read; nothing of the document is ever reported.
func RegistryPassword(raw []byte, server string) (password string, ok bool) {
	var cfg struct {
		Auths map[string]struct {
			Password string `json:"password"`
			Auth     string `json:"auth"`
		} `json:"auths"`
	}
	if json.Unmarshal(raw, &cfg) != nil {
		return "", false
	}
	e, ok := cfg.Auths[server]
	if !ok {
		return "", false
	}
	if e.Password != "" {
		return e.Password, true
	}
	dec, err := base64.StdEncoding.DecodeString(e.Auth)
	if err != nil {
		return "", false
	}
	_, pw, found := strings.Cut(string(dec), ":")
	return pw, found && pw != ""
}
