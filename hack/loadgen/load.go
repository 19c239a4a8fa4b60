package main

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"flag"
	"fmt"
	"io"
	"net/http"
	"os"
	"slices"
	"sync"
	"time"
)

// load sends POST requests with one body over c connections, for d or n requests in
// all, and prints requests/s and latency percentiles. It is the fallback of wrk and
// measures the naive read, whose requests take seconds.
func load(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("load", flag.ExitOnError)
	url := fs.String("url", "", "URL to POST to")
	body := fs.String("body", "", "request body")
	conns := fs.Int("c", 32, "connections")
	dur := fs.Duration("d", 10*time.Second, "duration (when -n is 0)")
	n := fs.Int("n", 0, "requests in all (0: run for -d)")
	save := fs.String("save", "", "write the first response body to this file")
	_ = fs.Parse(args)

	hc := &http.Client{Transport: &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns, DisableCompression: true}, Timeout: 5 * time.Minute}
	st := &loadState{url: *url, body: *body, n: *n, deadline: time.Now().Add(*dur), save: *save}
	var wg sync.WaitGroup
	start := time.Now()
	for range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			st.worker(ctx, hc)
		}()
	}
	wg.Wait()
	return st.report(time.Since(start))
}

// loadState is what load's connections share: what to send, when to stop, and what came back.
type loadState struct {
	url, body, save string
	n               int
	deadline        time.Time

	mu        sync.Mutex
	sent      int
	lat       []time.Duration
	bytesRead int64
	errs      int
	saveOnce  sync.Once
}

// next says whether one more request is to be sent, and counts it.
func (st *loadState) next() bool {
	st.mu.Lock()
	defer st.mu.Unlock()
	if (st.n > 0 && st.sent >= st.n) || (st.n == 0 && time.Now().After(st.deadline)) {
		return false
	}
	st.sent++
	return true
}

// worker sends requests over one connection until next says stop.
func (st *loadState) worker(ctx context.Context, hc *http.Client) {
	for ctx.Err() == nil && st.next() {
		t0 := time.Now()
		nb, err := st.one(hc)
		d := time.Since(t0)
		st.mu.Lock()
		if err != nil {
			st.errs++
		} else {
			st.lat = append(st.lat, d)
			st.bytesRead += nb
		}
		st.mu.Unlock()
	}
}

// one sends a request and reads its answer (into the save file, the first time).
func (st *loadState) one(hc *http.Client) (int64, error) {
	resp, err := hc.Post(st.url, "application/json", bytes.NewBufferString(st.body))
	if err != nil {
		return 0, err
	}
	defer resp.Body.Close()
	w := io.Discard
	var f *os.File
	if st.save != "" {
		st.saveOnce.Do(func() { f, _ = os.Create(st.save) })
	}
	if f != nil {
		defer f.Close()
		w = f
	}
	nb, err := io.Copy(w, resp.Body)
	if err == nil && resp.StatusCode != http.StatusOK {
		err = fmt.Errorf("status %d", resp.StatusCode)
	}
	return nb, err
}

// report prints requests/s and latency percentiles of the requests that succeeded.
func (st *loadState) report(el time.Duration) error {
	lat := st.lat
	if len(lat) == 0 {
		return errors.New("no request succeeded")
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))].Seconds() * 1000 }
	out, _ := json.Marshal(map[string]any{
		"requests": len(lat), "errors": st.errs, "rps": float64(len(lat)) / el.Seconds(),
		"p50_ms": pct(0.50), "p99_ms": pct(0.99), "bytes_per_response": st.bytesRead / int64(len(lat)),
	})
	fmt.Println(string(out))
	return nil
}

// await polls a read until the board serves total rows.
func await(ctx context.Context, args []string) error {
	fs := flag.NewFlagSet("await", flag.ExitOnError)
	url := fs.String("url", "", "read URL")
	body := fs.String("body", "", "request body")
	total := fs.Int("total", 0, "rows the board must serve")
	timeout := fs.Duration("timeout", 5*time.Minute, "give up after")
	_ = fs.Parse(args)
	ctx, cancel := context.WithTimeout(ctx, *timeout)
	defer cancel()
	last := -1
	for {
		resp, err := http.Post(*url, "application/json", bytes.NewBufferString(*body))
		if err == nil {
			var b struct {
				Pagination struct {
					Total int `json:"total"`
				} `json:"pagination"`
			}
			_ = json.NewDecoder(resp.Body).Decode(&b)
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				last = b.Pagination.Total
				if last == *total {
					return nil
				}
			}
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("the board serves %d rows, not %d: %w", last, *total, ctx.Err())
		case <-time.After(500 * time.Millisecond):
		}
	}
}
