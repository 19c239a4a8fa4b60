package apierr

import (
	"bytes"
	"encoding/json"
	"strconv"
	"unicode/utf8"
)

// invalidText reports the first JSON string of data (a key or a value) that is not
// valid UTF-8 or holds an unpaired UTF-16 surrogate escape, as a field path
// ("config.agents[0].name"); ok is true when there is none. data is valid JSON.
func invalidText(data []byte) (field string, ok bool) {
	if utf8.Valid(data) && !bytes.Contains(data, []byte(`\u`)) && !bytes.Contains(data, []byte(`\U`)) {
		return "", true // the common case: nothing to look at
	}
	dec := json.NewDecoder(bytes.NewReader(data))
	var at jsonPath
	prev := dec.InputOffset()
	for {
		tok, err := dec.Token()
		if err != nil {
			return "", true
		}
		raw := data[prev:dec.InputOffset()]
		prev = dec.InputOffset()
		switch t := tok.(type) {
		case json.Delim:
			switch t {
			case '{':
				at = append(at, frame{object: true, inKey: true})
			case '[':
				at = append(at, frame{})
			default:
				at = at[:len(at)-1]
				at.done()
			}
		case string:
			if !validRawString(raw) {
				if n := len(at); n > 0 && at[n-1].object && at[n-1].inKey {
					at[n-1].key = t // the invalid string is this key
				}
				return at.String(), false
			}
			at.text(t)
		default:
			at.done()
		}
	}
}

// frame is one open object or array of the JSON being read.
type frame struct {
	object bool
	key    string
	index  int
	inKey  bool // object: the next string is a key
}

// jsonPath is the stack of open containers, read as a field path.
type jsonPath []frame

func (p jsonPath) String() string {
	var b []byte
	for i, f := range p {
		if f.object {
			if i > 0 {
				b = append(b, '.')
			}
			b = append(b, f.key...)
		} else {
			b = append(b, '[')
			b = strconv.AppendInt(b, int64(f.index), 10)
			b = append(b, ']')
		}
	}
	return string(b)
}

// text takes a string token: an object's key, or a value.
func (p jsonPath) text(s string) {
	if n := len(p); n > 0 && p[n-1].object && p[n-1].inKey {
		p[n-1].key = s
		p[n-1].inKey = false
		return
	}
	p.done()
}

// done advances the innermost container past a value.
func (p jsonPath) done() {
	if n := len(p); n > 0 {
		if p[n-1].object {
			p[n-1].inKey = true
		} else {
			p[n-1].index++
		}
	}
}

// validRawString says whether the raw bytes of a JSON string token (with whatever
// separators precede it) are valid UTF-8 and pair every surrogate escape.
func validRawString(raw []byte) bool {
	if !utf8.Valid(raw) {
		return false
	}
	pendingHigh := false
	for i := 0; i < len(raw); i++ {
		if raw[i] != '\\' {
			if pendingHigh {
				return false
			}
			continue
		}
		i++
		if i >= len(raw) {
			return !pendingHigh
		}
		if raw[i] != 'u' {
			if pendingHigh {
				return false
			}
			continue
		}
		if i+4 >= len(raw) {
			return false
		}
		r, err := strconv.ParseUint(string(raw[i+1:i+5]), 16, 32)
		if err != nil {
			return false
		}
		i += 4
		switch {
		case r >= 0xD800 && r <= 0xDBFF:
			if pendingHigh {
				return false
			}
			pendingHigh = true
		case r >= 0xDC00 && r <= 0xDFFF:
			if !pendingHigh {
				return false
			}
			pendingHigh = false
		default:
			if pendingHigh {
				return false
			}
		}
	}
	return !pendingHigh
}
