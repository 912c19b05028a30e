package autostart

import (
	"errors"
	"io/fs"

	"golang.org/x/sys/windows/registry"
)

// defaultStore is the Sandtray value of the current user's Run key.
func defaultStore() (store, error) {
	return runKey{open: func() (registryKey, error) {
		k, _, err := registry.CreateKey(registry.CURRENT_USER, runKeyPath, registry.QUERY_VALUE|registry.SET_VALUE)
		if err != nil {
			return nil, err
		}
		return winKey{k}, nil
	}}, nil
}

// winKey reports a missing value as fs.ErrNotExist, as runKey expects.
type winKey struct{ registry.Key }

func (k winKey) GetStringValue(name string) (string, uint32, error) {
	v, t, err := k.Key.GetStringValue(name)
	return v, t, notExist(err)
}

func (k winKey) DeleteValue(name string) error { return notExist(k.Key.DeleteValue(name)) }

func notExist(err error) error {
	if errors.Is(err, registry.ErrNotExist) {
		return fs.ErrNotExist
	}
	return err
}
