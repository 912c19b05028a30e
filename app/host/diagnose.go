//go:build cgo

package host

import (
	"context"

	"github.com/sandtray/sandtray/app/doctor"
)

// uiDiagnoser runs app/doctor for the tray's Help → Diagnose, on the
// config the app was started with.
type uiDiagnoser struct{ configPath string }

func (d uiDiagnoser) Diagnose(ctx context.Context) (string, bool) {
	r := doctor.Run(ctx, doctor.Options{ConfigPath: d.configPath})
	return r.String(), r.OK()
}
