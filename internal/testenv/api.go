package testenv

import (
	"bytes"
	"context"
	"encoding/json"
	"io"
	"net/http"
	"strings"
)

// CallAPI sends one request to Podium's HTTP API (url is the whole address, an
// Operator's BaseURL and a path) with hc (nil: http.DefaultClient), as the tests' users
// do: the body as NewAPIRequest encodes it, the Content-Type application/json even
// without a body, and token "" sends no Authorization header. It returns the status and
// the whole body.
func CallAPI(ctx context.Context, hc *http.Client, method, url, token string, body any) (int, []byte, error) {
	req, err := NewAPIRequest(ctx, method, url, body)
	if err != nil {
		return 0, nil, err
	}
	req.Header.Set("Content-Type", "application/json")
	if token != "" {
		req.Header.Set("Authorization", "Bearer "+token)
	}
	resp, err := SendAPIRequest(hc, req)
	return resp.Status, resp.Body, err
}

// NewAPIRequest is a request to url whose body is body: nil sends none, a string or
// []byte is sent as it is (a test of malformed input writes its own bytes) and anything
// else as its JSON, with the Content-Type application/json.
func NewAPIRequest(ctx context.Context, method, url string, body any) (*http.Request, error) {
	var rd io.Reader
	switch b := body.(type) {
	case nil:
	case string:
		rd = strings.NewReader(b)
	case []byte:
		rd = bytes.NewReader(b)
	default:
		js, err := json.Marshal(b)
		if err != nil {
			return nil, err
		}
		rd = bytes.NewReader(js)
	}
	req, err := http.NewRequestWithContext(ctx, method, url, rd)
	if err != nil {
		return nil, err
	}
	if body != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	return req, nil
}

// APIResponse is an answer of the HTTP API, read whole.
type APIResponse struct {
	Status int
	Header http.Header
	Body   []byte
}

// SendAPIRequest sends req with hc (nil: http.DefaultClient) and reads the whole answer.
func SendAPIRequest(hc *http.Client, req *http.Request) (APIResponse, error) {
	if hc == nil {
		hc = http.DefaultClient
	}
	resp, err := hc.Do(req)
	if err != nil {
		return APIResponse{}, err
	}
	defer resp.Body.Close()
	out, err := io.ReadAll(resp.Body)
	return APIResponse{Status: resp.StatusCode, Header: resp.Header, Body: out}, err
}
