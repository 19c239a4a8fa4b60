package httpapi

import (
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"regexp"
	"strings"
	"testing"
	"testing/iotest"

	"podium.dev/podium/internal/apierr"
)

// The regular expression validPackage implements (ids: hubv1alpha1.IsUUID, fuzzed
// against hubv1alpha1.UUIDPattern in its own package).
var packageRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?/[a-z0-9]([-.a-z0-9]*[a-z0-9])?$`)

var decodeSeeds = []string{
	`{"package":"bench/ds","name":"main","page":1,"page_size":50}`,
	`{"package":"bench/ds","name":"main","page":2000,"page_size":50}`,
	` {"leaderboard_id":"6BA7B810-9dad-11d1-80b4-00c04fd430c8"}` + "\n",
	`{"leaderboard_id":"6ba7b810-9dad-11d1-80b4-00c04fd430c8","page":-3}`,
	`{}`, ``, ` `, `{`, `}`, `[]`, `null`, `"x"`, `1`,
	`{"package":"a/b","name":"c"}{}`,
	`{"package":"a/b","name":"c"} x`,
	`{"package":"a/b","name":"c",}`,
	`{"package":"a/b","name":"c","limit":5}`,
	`{"Package":"a/b","NAME":"c"}`,
	`{"package":"a/b","package":"x/y","name":"c"}`,
	`{"package":"a/b","name":null}`,
	`{"package":"a\/b","name":"c\u0041"}`,
	`{"package":"a/b","name":"ü"}`,
	`{"package":"a/b","name":"c","page":1.0}`,
	`{"package":"a/b","name":"c","page":1e2}`,
	`{"package":"a/b","name":"c","page":01}`,
	`{"package":"a/b","name":"c","page":-0}`,
	`{"package":"a/b","name":"c","page":"1"}`,
	`{"package":1,"name":"c"}`,
	`{"package":"a/b","name":"c","page":99999999999999999999}`,
	`{"package":"a/b","name":"c","page":999999999999999999}`,
	`{"package":"a/b","name":"c","page":-9223372036854775808}`,
	`{"package":"a/b","name":"c","page_size":true}`,
	`{"package" : "a/b" ,	"name"	:"c"	,"page":	3 }`,
	`{"package":"a/b","name":"c","page":1}` + "\x00",
	"{\"package\":\"a/b\",\"name\":\"c\t\"}",
	`{"package":"a/b","name":"` + strings.Repeat("x", 2000) + `"}`,
}

// readReference decodes body exactly as the read did before its fast path.
func readReference(r *http.Request) (decodedRead, error) {
	var req readRequest
	if err := apierr.DecodeJSON(r, &req); err != nil {
		return decodedRead{}, err
	}
	var d decodedRead
	if req.Package != nil {
		d.pkg, d.hasPkg = *req.Package, true
	}
	if req.Name != nil {
		d.name, d.hasName = *req.Name, true
	}
	if req.LeaderboardID != nil {
		d.id, d.hasID = *req.LeaderboardID, true
	}
	if req.Page != nil {
		d.page, d.hasPage = *req.Page, true
	}
	if req.PageSize != nil {
		d.size, d.hasSize = *req.PageSize, true
	}
	return d, nil
}

// sameDecode fails t unless decodeRead and the reference agree on requests made by mk.
func sameDecode(t *testing.T, mk func() *http.Request) {
	t.Helper()
	want, wantErr := readReference(mk())
	got, gotErr := decodeRead(mk())
	if (wantErr == nil) != (gotErr == nil) {
		t.Fatalf("error %v, want %v", gotErr, wantErr)
	}
	if wantErr != nil {
		var we, ge *apierr.Error
		if !errors.As(wantErr, &we) || !errors.As(gotErr, &ge) {
			t.Fatalf("errors %T %v and %T %v", gotErr, gotErr, wantErr, wantErr)
		}
		if !reflect.DeepEqual(*we, *ge) {
			t.Fatalf("error %+v, want %+v", *ge, *we)
		}
		return
	}
	if got != want {
		t.Fatalf("decoded %+v, want %+v", got, want)
	}
}

// FuzzDecodeRead: the fast path decodes a body exactly as encoding/json does, and any
// body it does not take gets encoding/json's own answer, whether the body arrives at
// once, a byte at a time, or is cut by the body limit.
func FuzzDecodeRead(f *testing.F) {
	for _, s := range decodeSeeds {
		f.Add([]byte(s))
	}
	f.Fuzz(func(t *testing.T, body []byte) {
		sameDecode(t, func() *http.Request {
			return httptest.NewRequest(http.MethodPost, ReadPath, strings.NewReader(string(body)))
		})
		sameDecode(t, func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, ReadPath, nil)
			r.Body = io.NopCloser(iotest.OneByteReader(strings.NewReader(string(body))))
			return r
		})
		sameDecode(t, func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, ReadPath, strings.NewReader(string(body)))
			r.Body = http.MaxBytesReader(httptest.NewRecorder(), r.Body, 40)
			return r
		})
		sameDecode(t, func() *http.Request {
			r := httptest.NewRequest(http.MethodPost, ReadPath, nil)
			r.Body = io.NopCloser(io.MultiReader(strings.NewReader(string(body)), iotest.ErrReader(io.ErrUnexpectedEOF)))
			return r
		})
	})
}

// The common bodies take the fast path.
func TestDecodeFastTakesTheCommonShape(t *testing.T) {
	for _, s := range decodeSeeds[:5] {
		var f fastRequest
		if !decodeFast([]byte(s), &f) {
			t.Errorf("decodeFast(%s) = false", s)
		}
	}
}

func FuzzValidators(f *testing.F) {
	for _, s := range []string{"a/b", "bench/ds", "a-b/c.d", "a-/b", "-a/b", "a/b.", "a/.b", "a/b/c", "/b", "a/", "",
		"A/b", "a_b/c", "6ba7b810-9dad-11d1-80b4-00c04fd430c8", "6BA7B810-9DAD-11D1-80B4-00C04FD430C8",
		"6ba7b810-9dad-11d1-80b4-00c04fd430c", "6ba7b810-9dad-11d1-80b4_00c04fd430c8", "6ba7b810-9dad-11d1-80b4-00c04fd430cg"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		if got, want := validPackage(s), packageRE.MatchString(s); got != want {
			t.Errorf("validPackage(%q) = %v, want %v", s, got, want)
		}
	})
}

// A read of a cached page allocates only what net/http and the request's own values
// need: this guards the fast path against a change that quietly brings garbage back.
func TestDecodeReadAllocations(t *testing.T) {
	body := `{"package":"bench/ds","name":"main","page":2000,"page_size":50}`
	r := httptest.NewRequest(http.MethodPost, ReadPath, nil)
	rd := strings.NewReader(body)
	r.Body = io.NopCloser(rd)
	allocs := testing.AllocsPerRun(100, func() {
		rd.Reset(body)
		if _, err := decodeRead(r); err != nil {
			t.Fatal(err)
		}
	})
	// The package and the name, copied out of the pooled buffer.
	if allocs > 2 {
		t.Errorf("decodeRead allocates %v times, want at most 2", allocs)
	}
}
