package autostart

import (
	"io/fs"
	"testing"
)

// fakeKey is an in-memory registry key.
type fakeKey struct {
	values map[string]string
	closed int
}

func (k *fakeKey) GetStringValue(name string) (string, uint32, error) {
	v, ok := k.values[name]
	if !ok {
		return "", 0, fs.ErrNotExist
	}
	return v, 1, nil // REG_SZ
}

func (k *fakeKey) SetStringValue(name, value string) error { k.values[name] = value; return nil }

func (k *fakeKey) DeleteValue(name string) error {
	if _, ok := k.values[name]; !ok {
		return fs.ErrNotExist
	}
	delete(k.values, name)
	return nil
}

func (k *fakeKey) Close() error { k.closed++; return nil }

func TestRunKeyWritten(t *testing.T) {
	key := &fakeKey{values: map[string]string{"OneDrive": `"C:\OneDrive.exe" /background`}}
	opens := 0
	a := &Autostart{s: runKey{open: func() (registryKey, error) { opens++; return key, nil }}}
	if st, err := a.Status(); err != nil || st.Enabled {
		t.Fatalf("fresh Status = %+v, %v", st, err)
	}
	exe := `C:\Program Files\Sandtray\sandtray.exe`
	st, err := a.Enable(exe)
	if err != nil || !st.Enabled || st.Command != exe {
		t.Fatalf("Enable = %+v, %v", st, err)
	}
	if got, want := key.values["Sandtray"], `"C:\Program Files\Sandtray\sandtray.exe"`; got != want {
		t.Errorf("Run value = %s, want %s", got, want)
	}
	if st.Where != `HKCU\Software\Microsoft\Windows\CurrentVersion\Run\Sandtray` {
		t.Errorf("Where = %s", st.Where)
	}
	if st, err := a.Disable(); err != nil || st.Enabled {
		t.Fatalf("Disable = %+v, %v", st, err)
	}
	if _, err := a.Disable(); err != nil {
		t.Errorf("disabling twice: %v", err)
	}
	if _, ok := key.values["OneDrive"]; !ok || len(key.values) != 1 {
		t.Errorf("other Run values touched: %v", key.values)
	}
	if key.closed != opens {
		t.Errorf("opened the key %d times, closed it %d", opens, key.closed)
	}
}

func TestRunProgram(t *testing.T) {
	for v, want := range map[string]string{
		`"C:\a b\sandtray.exe"`:        `C:\a b\sandtray.exe`,
		`"C:\a b\sandtray.exe" --flag`: `C:\a b\sandtray.exe`,
		`C:\sandtray.exe --flag`:       `C:\sandtray.exe`,
	} {
		if got := runProgram(v); got != want {
			t.Errorf("runProgram(%s) = %s, want %s", v, got, want)
		}
	}
}

func TestRunKeyAbsolutePaths(t *testing.T) {
	for p, want := range map[string]bool{
		`C:\Sandtray\sandtray.exe`: true, `d:/x/sandtray.exe`: true, `\\server\share\sandtray.exe`: true,
		`sandtray.exe`: false, `\sandtray.exe`: false, `/usr/bin/sandtray`: false,
	} {
		if got := (runKey{}).isAbs(p); got != want {
			t.Errorf("isAbs(%s) = %v, want %v", p, got, want)
		}
	}
}
