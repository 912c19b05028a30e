package main

import (
	"context"
	"errors"
	"flag"
	"fmt"
	"io"
	"time"

	"github.com/sandtray/sandtray/engine/config"

	"github.com/sandtray/sandtray/app/host"
	"github.com/sandtray/sandtray/engine"
)

func init() {
	register(command{names: []string{"image"}, run: runImage,
		usage: "image build|status [--tag IMAGE]    build the sandbox image (from a registry, else Debian's mirror), or say whether Docker has it"})
}

// runImage is `sandtray image build|status`.
func runImage(ctx context.Context, args []string, e env) error {
	if len(args) == 0 || (args[0] != "build" && args[0] != "status") {
		return errors.New("image needs build or status: `sandtray image build` makes the sandbox image, `sandtray image status` says whether Docker has it")
	}
	fs := flag.NewFlagSet("image "+args[0], flag.ContinueOnError)
	fs.SetOutput(e.stderr)
	configPath := fs.String("config", "", "config file (default: config.toml in the xdg config dir)")
	tag := fs.String("tag", "", "the image to build or look at (default: the config's default_image for status, "+engine.BuiltinImage+" for build)")
	source := fs.String("source", "auto", "build: auto (a registry, else Debian's mirror), registry or mirror")
	mirror := fs.String("mirror", "", "build: the Debian mirror (default http://deb.debian.org/debian, or $SANDTRAY_DEBIAN_MIRROR)")
	suite := fs.String("suite", "", "build: the Debian suite (default bookworm)")
	if err := fs.Parse(args[1:]); err != nil {
		return err
	}
	cfg, err := config.Load(cmpOr(*configPath, host.ConfigPath()))
	if err != nil {
		return err
	}
	if args[0] == "status" {
		return imageStatus(ctx, cfg, *tag, e.stdout)
	}
	switch engine.ImageSource(*source) {
	case "auto", "registry", "mirror":
	default:
		return fmt.Errorf("--source %q: use auto, registry or mirror", *source)
	}
	o := engine.ImageBuildOptions{Tag: cmpOr(*tag, engine.BuiltinImage), Source: engine.ImageSource(*source),
		MirrorURL: *mirror, Suite: *suite, Progress: progressPrinter(e.stderr)}
	fmt.Fprintf(e.stderr, "Building %s (a few minutes the first time)\n", o.Tag)
	res, err := engine.BuildImage(ctx, cfg, o)
	if err != nil {
		return fmt.Errorf("image build: %w", err)
	}
	from := "the Dockerfile, with its base image from a registry"
	if res.Source == "mirror" {
		from = fmt.Sprintf("Debian's mirror (%d packages)", res.Packages)
	}
	fmt.Fprintf(e.stdout, "Built %s (%s) from %s in %s.\n", o.Tag, shortImageID(res.ImageID), from, res.Took.Round(time.Second))
	return nil
}

// imageStatus prints whether Docker has the image and how it was made; a
// missing image is an error (exit 1) that says how to build it.
func imageStatus(ctx context.Context, cfg config.Config, ref string, out io.Writer) error {
	st, err := engine.InspectImageState(ctx, cfg, ref)
	if err != nil {
		return fmt.Errorf("image status: %w", err)
	}
	if !st.Present {
		if st.Builtin {
			return fmt.Errorf("%s is not on this Docker; run `sandtray image build` (or let the first sandbox build it)", st.Ref)
		}
		return fmt.Errorf("%s is not on this Docker; pull or build it (`docker pull %s`), or set default_image to an image you have", st.Ref, st.Ref)
	}
	fmt.Fprintf(out, "%s: present, %s, %d MB, created %s", st.Ref, shortImageID(st.ID), st.Size>>20, st.Created.Local().Format("2006-01-02 15:04"))
	if st.Comment != "" {
		fmt.Fprintf(out, " (%s)", st.Comment)
	}
	fmt.Fprintln(out)
	return nil
}

// progressPrinter prints each new step on its own line, and how far a
// step that counts has got, every tenth of the way.
func progressPrinter(w io.Writer) func(engine.ImageBuildProgress) {
	step, tenth := "", int64(-1)
	return func(p engine.ImageBuildProgress) {
		if p.Step != step {
			step, tenth = p.Step, -1
			fmt.Fprintf(w, "  %s\n", p.Step)
		}
		if p.Total <= 0 {
			return
		}
		if t := p.Done * 10 / p.Total; t > tenth {
			tenth = t
			if p.Bytes {
				fmt.Fprintf(w, "    %3d%%  %d of %d MB\n", t*10, p.Done>>20, p.Total>>20)
			} else {
				fmt.Fprintf(w, "    %3d%%  %d of %d packages\n", t*10, p.Done, p.Total)
			}
		}
	}
}

func shortImageID(id string) string {
	if len(id) > 19 { // "sha256:" and 12 hex digits
		return id[:19]
	}
	return id
}
