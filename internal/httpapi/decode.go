package httpapi

import (
	"bytes"
	"io"
	"net/http"
	"strings"
	"sync"

	"podium.dev/podium/internal/apierr"
)

// The read's body is decoded on every request, so the common shape takes a fast path
// that allocates only the strings it returns: a flat object of the five known fields, exact lowercase
// keys, each once, plain ASCII strings without escapes and integers. Whatever else a
// body holds (escapes, null, floats, a key in another case, duplicates, an unknown or
// misplaced field, anything after the object, a body longer than the buffer or a read
// error) goes to apierr.DecodeJSON with the very same bytes, so every answer, error or
// not, is the one encoding/json gives (FuzzDecodeRead checks the two agree).

// readBodyMax is the largest body the fast path reads; a legitimate read is under
// 200 bytes.
const readBodyMax = 1024

var bodyBufs = sync.Pool{New: func() any { b := make([]byte, readBodyMax); return &b }}

// fastRequest is what the fast path decoded; its slices alias the body's buffer.
type fastRequest struct {
	pkg, name, id          []byte
	hasPkg, hasName, hasID bool
	page, size             int64
	hasPage, hasSize       bool
}

// decodedRead is a decoded read body: which fields it gave, and their values.
type decodedRead struct {
	pkg, name, id          string
	hasPkg, hasName, hasID bool
	page, size             int64
	hasPage, hasSize       bool
}

// decodeRead decodes r's body strictly: through the fast path when the body has the
// common shape, else through apierr.DecodeJSON (the same bytes, the same answers).
func decodeRead(r *http.Request) (decodedRead, error) {
	bp := bodyBufs.Get().(*[]byte)
	defer bodyBufs.Put(bp)
	buf := *bp
	n, complete, rerr := readBody(r.Body, buf)
	if complete {
		var f fastRequest
		if decodeFast(buf[:n], &f) {
			d := decodedRead{
				hasPkg: f.hasPkg, hasName: f.hasName, hasID: f.hasID,
				page: f.page, size: f.size, hasPage: f.hasPage, hasSize: f.hasSize,
			}
			if f.hasPkg {
				d.pkg = string(f.pkg)
			}
			if f.hasName {
				d.name = string(f.name)
			}
			if f.hasID {
				d.id = string(f.id)
			}
			return d, nil
		}
	}
	// Replay what was read, then the rest of the body or the error that stopped it.
	var rest io.Reader = r.Body
	switch {
	case complete:
		rest = eofReader{}
	case rerr != nil:
		rest = errReader{rerr}
	}
	body := r.Body
	r.Body = replayBody{io.MultiReader(bytes.NewReader(buf[:n]), rest), body}
	defer func() { r.Body = body }()
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

type replayBody struct {
	io.Reader
	io.Closer
}

// readBody reads body into buf until it ends (complete), fails (err) or buf is full.
func readBody(body io.Reader, buf []byte) (n int, complete bool, err error) {
	if body == nil {
		return 0, true, nil
	}
	for n < len(buf) {
		var m int
		m, err = body.Read(buf[n:])
		n += m
		if err == io.EOF { // a body ends with io.EOF itself, never wrapped
			return n, true, nil
		}
		if err != nil {
			return n, false, err
		}
	}
	return n, false, nil
}

type eofReader struct{}

func (eofReader) Read([]byte) (int, error) { return 0, io.EOF }

type errReader struct{ err error }

func (e errReader) Read([]byte) (int, error) { return 0, e.err }

// decodeFast decodes b into f when b has the common shape; false means "ask
// encoding/json" (f is then meaningless), never "invalid".
func decodeFast(b []byte, f *fastRequest) bool {
	i := skipSpace(b, 0)
	if i >= len(b) || b[i] != '{' {
		return false
	}
	i = skipSpace(b, i+1)
	if i < len(b) && b[i] == '}' {
		return skipSpace(b, i+1) == len(b)
	}
	for {
		key, next, ok := plainKey(b, i)
		if !ok {
			return false
		}
		i, ok = f.set(key, b, next)
		if !ok {
			return false
		}
		i = skipSpace(b, i)
		if i >= len(b) {
			return false
		}
		switch b[i] {
		case ',':
			i = skipSpace(b, i+1)
		case '}':
			return skipSpace(b, i+1) == len(b)
		default:
			return false
		}
	}
}

// plainKey reads a key of plain lowercase letters and underscores at b[i] and the colon
// after it; next is where its value starts.
func plainKey(b []byte, i int) (key []byte, next int, ok bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, 0, false
	}
	k := i + 1
	j := k
	for j < len(b) && (b[j] >= 'a' && b[j] <= 'z' || b[j] == '_') {
		j++
	}
	if j >= len(b) || b[j] != '"' {
		return nil, 0, false
	}
	i = skipSpace(b, j+1)
	if i >= len(b) || b[i] != ':' {
		return nil, 0, false
	}
	return b[k:j], skipSpace(b, i+1), true
}

// set reads the value of key at b[i] into f; false for an unknown or repeated key or a
// value of another shape.
func (f *fastRequest) set(key []byte, b []byte, i int) (next int, ok bool) {
	switch string(key) { // no allocation: the compiler compares in place
	case "package":
		return once(&f.hasPkg, &f.pkg, plainString, b, i)
	case "name":
		return once(&f.hasName, &f.name, plainString, b, i)
	case "leaderboard_id":
		return once(&f.hasID, &f.id, plainString, b, i)
	case "page":
		return once(&f.hasPage, &f.page, plainInt, b, i)
	case "page_size":
		return once(&f.hasSize, &f.size, plainInt, b, i)
	}
	return 0, false
}

// once reads a key's value at b[i] into *dst with read, the first time the key comes
// (seen); a repeated key is not the common shape.
func once[T any](seen *bool, dst *T, read func([]byte, int) (T, int, bool), b []byte, i int) (next int, ok bool) {
	if *seen {
		return 0, false
	}
	*seen = true
	*dst, next, ok = read(b, i)
	return next, ok
}

func skipSpace(b []byte, i int) int {
	for i < len(b) && (b[i] == ' ' || b[i] == '\t' || b[i] == '\n' || b[i] == '\r') {
		i++
	}
	return i
}

// plainString reads a JSON string of printable ASCII without escapes at b[i:].
func plainString(b []byte, i int) ([]byte, int, bool) {
	if i >= len(b) || b[i] != '"' {
		return nil, i, false
	}
	for j := i + 1; j < len(b); j++ {
		switch c := b[j]; {
		case c == '"':
			return b[i+1 : j], j + 1, true
		case c < 0x20 || c > 0x7e || c == '\\':
			return nil, j, false
		}
	}
	return nil, len(b), false
}

// plainInt reads a JSON integer of at most 18 digits (no fraction, no exponent) at b[i:].
func plainInt(b []byte, i int) (int64, int, bool) {
	neg := i < len(b) && b[i] == '-'
	if neg {
		i++
	}
	start := i
	var v int64
	for i < len(b) && b[i] >= '0' && b[i] <= '9' {
		v = v*10 + int64(b[i]-'0')
		i++
	}
	digits := i - start
	switch {
	case digits == 0, digits > 18, digits > 1 && b[start] == '0':
		return 0, i, false
	case i < len(b) && (b[i] == '.' || b[i] == 'e' || b[i] == 'E'):
		return 0, i, false
	}
	if neg {
		v = -v
	}
	return v, i, true
}

// validPackage is packageRE without the regexp engine.
func validPackage(s string) bool {
	org, ds, ok := strings.Cut(s, "/")
	return ok && slugPart(org, false) && slugPart(ds, true)
}

// slugPart: [a-z0-9]([-a-z0-9]*[a-z0-9])? , with '.' allowed inside when dots.
func slugPart(s string, dots bool) bool {
	if s == "" || !alnum(s[0]) || !alnum(s[len(s)-1]) {
		return false
	}
	for i := 1; i < len(s)-1; i++ {
		if c := s[i]; !alnum(c) && c != '-' && (!dots || c != '.') {
			return false
		}
	}
	return true
}

func alnum(c byte) bool { return c >= 'a' && c <= 'z' || c >= '0' && c <= '9' }
