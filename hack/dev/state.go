package main

import (
	"crypto/rand"
	"crypto/rsa"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
)

// lockState takes an exclusive lock on the data directory, so that a second `make dev`
// on it stops at once with a message instead of waiting for etcd's own lock. The lock
// goes with the process (the file stays and records the holder's pid).
func lockState(state string) (*os.File, error) {
	path := filepath.Join(state, "lock")
	f, err := os.OpenFile(path, os.O_RDWR|os.O_CREATE, 0o600)
	if err != nil {
		return nil, err
	}
	if err := syscall.Flock(int(f.Fd()), syscall.LOCK_EX|syscall.LOCK_NB); err != nil {
		holder, _ := os.ReadFile(path)
		f.Close()
		if errors.Is(err, syscall.EWOULDBLOCK) {
			pid := strings.TrimSpace(string(holder))
			if pid == "" {
				pid = "unknown"
			}
			return nil, fmt.Errorf("another `make dev` (pid %s) is already running on %s: stop it (Ctrl-C) first", pid, state)
		}
		return nil, fmt.Errorf("locking %s: %w", path, err)
	}
	if err := f.Truncate(0); err == nil {
		_, _ = f.WriteAt([]byte(strconv.Itoa(os.Getpid())+"\n"), 0)
	}
	return f, nil
}

// serviceAccountKey returns the key pair kube-apiserver signs and checks ServiceAccount
// tokens with, kept in the data directory and made on the first run, so that tokens
// minted before a restart of `make dev` keep working after it.
func serviceAccountKey(state string) (keyFile, pubFile string, err error) {
	keyFile, pubFile = filepath.Join(state, "sa.key"), filepath.Join(state, "sa.pub")
	_, errKey := os.Stat(keyFile)
	_, errPub := os.Stat(pubFile)
	if errKey == nil && errPub == nil {
		return keyFile, pubFile, nil
	}
	key, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		return "", "", err
	}
	pub, err := x509.MarshalPKIXPublicKey(&key.PublicKey)
	if err != nil {
		return "", "", err
	}
	if err := os.WriteFile(pubFile, pem.EncodeToMemory(&pem.Block{Type: "PUBLIC KEY", Bytes: pub}), 0o600); err != nil {
		return "", "", err
	}
	priv := pem.EncodeToMemory(&pem.Block{Type: "RSA PRIVATE KEY", Bytes: x509.MarshalPKCS1PrivateKey(key)})
	return keyFile, pubFile, os.WriteFile(keyFile, priv, 0o600)
}
