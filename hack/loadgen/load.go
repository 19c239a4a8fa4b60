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

	tr := &http.Transport{MaxIdleConnsPerHost: *conns, MaxConnsPerHost: *conns, DisableCompression: true}
	hc := &http.Client{Transport: tr, Timeout: 5 * time.Minute}
	deadline := time.Now().Add(*dur)
	var mu sync.Mutex
	var lat []time.Duration
	var bytesRead int64
	var errs int
	var sent int
	var wg sync.WaitGroup
	var saveOnce sync.Once
	start := time.Now()
	for range *conns {
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				mu.Lock()
				if (*n > 0 && sent >= *n) || (*n == 0 && time.Now().After(deadline)) {
					mu.Unlock()
					return
				}
				sent++
				mu.Unlock()
				t0 := time.Now()
				resp, err := hc.Post(*url, "application/json", bytes.NewBufferString(*body))
				var nb int64
				if err == nil {
					w := io.Discard
					var f *os.File
					if *save != "" {
						saveOnce.Do(func() { f, _ = os.Create(*save) })
						if f != nil {
							w = f
							defer f.Close()
						}
					}
					nb, err = io.Copy(w, resp.Body)
					resp.Body.Close()
					if err == nil && resp.StatusCode != http.StatusOK {
						err = fmt.Errorf("status %d", resp.StatusCode)
					}
				}
				d := time.Since(t0)
				mu.Lock()
				if err != nil {
					errs++
				} else {
					lat = append(lat, d)
					bytesRead += nb
				}
				mu.Unlock()
			}
		}()
	}
	wg.Wait()
	el := time.Since(start)
	if len(lat) == 0 {
		return errors.New("no request succeeded")
	}
	slices.Sort(lat)
	pct := func(p float64) float64 { return lat[min(len(lat)-1, int(p*float64(len(lat))))].Seconds() * 1000 }
	out, _ := json.Marshal(map[string]any{
		"requests": len(lat), "errors": errs, "rps": float64(len(lat)) / el.Seconds(),
		"p50_ms": pct(0.50), "p99_ms": pct(0.99), "bytes_per_response": bytesRead / int64(len(lat)),
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
