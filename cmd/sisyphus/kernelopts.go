package main

import (
	"context"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/sisyphus-go/sisyphus/internal/authority"
	"github.com/sisyphus-go/sisyphus/internal/kernelopts"
	"github.com/sisyphus-go/sisyphus/internal/siyuan"
)

// kernelOptionFlags override the upstream plugin's kernel options read from
// the workspace (kernelopts.File); --read-timeout and --max-template-size,
// registered with the limits, override readTimeoutMs and templateMaxMiB.
type kernelOptionFlags struct {
	readMaxRequests, readMaxMiB, readRetries int
	origins                                  []string
}

func (k *kernelOptionFlags) register(cmd *cobra.Command, origins bool) {
	cmd.Flags().IntVar(&k.readMaxRequests, "read-max-requests", 0, "kernel calls one read may make, 16 to 512 (default: kernelOptions.readMaxRequests of the workspace's plugin settings, else 128)")
	cmd.Flags().IntVar(&k.readMaxMiB, "read-max-mib", 0, "MiB one read may decode, 1 to 64 (default: kernelOptions.readMaxMiB, else 8)")
	cmd.Flags().IntVar(&k.readRetries, "read-retries", 0, "retries of a read after a transport failure, 429 or 5xx, 0 to 3 (default: kernelOptions.readRetries, else 3)")
	if origins {
		cmd.Flags().StringArrayVar(&k.origins, "allow-origin", nil, "a browser origin allowed besides the server's own, like https://app.example (repeatable; default: kernelOptions.allowedOrigins)")
	}
}

// readKernelOptions reads the workspace's plugin settings file through c: a
// missing file (or one that cannot be read or parsed) leaves the defaults,
// with a note saying so.
func readKernelOptions(ctx context.Context, c *siyuan.Client, log *slog.Logger) (kernelopts.Options, []string) {
	rc, _, err := c.GetFile(ctx, kernelopts.File)
	if errors.Is(err, siyuan.ErrFileNotFound) {
		return kernelopts.Defaults(), nil
	}
	if err != nil {
		log.Warn("the kernel options could not be read; the defaults apply", "file", kernelopts.File, "err", err)
		return kernelopts.Defaults(), []string{"the settings file could not be read (" + err.Error() + "): the defaults apply"}
	}
	defer rc.Close()
	data, err := io.ReadAll(io.LimitReader(rc, 1<<20))
	if err != nil {
		return kernelopts.Defaults(), []string{"the settings file could not be read (" + err.Error() + "): the defaults apply"}
	}
	o, notes, err := kernelopts.Parse(data)
	if err != nil {
		return kernelopts.Defaults(), []string{err.Error() + ": the defaults apply"}
	}
	for _, n := range notes {
		log.Warn("kernel option corrected", "file", kernelopts.File, "note", n)
	}
	return o, notes
}

// effectiveKernelOptions applies the flags given over the options read, and
// returns them with the view config show and the settings page show.
func effectiveKernelOptions(cmd *cobra.Command, read kernelopts.Options, notes []string, k *kernelOptionFlags, l *limitFlags) (kernelopts.Options, authority.KernelOptionsView, error) {
	o := read
	fromFile := func(name string) string {
		for _, f := range kernelopts.Fields {
			if f.Name == name && f.Get(read) != f.Default {
				return "configuration"
			}
		}
		return "default"
	}
	src := map[string]string{}
	for _, f := range kernelopts.Fields {
		src[f.Name] = fromFile(f.Name)
	}
	set := func(flag, name string, v, lo, hi int, dst *int) error {
		if !cmd.Flags().Changed(flag) {
			return nil
		}
		if v < lo || v > hi {
			return fmt.Errorf("--%s must be between %d and %d, got %d", flag, lo, hi, v)
		}
		*dst, src[name] = v, "--"+flag
		return nil
	}
	for _, err := range []error{
		set("read-max-requests", "readMaxRequests", k.readMaxRequests, 16, 512, &o.ReadMaxRequests),
		set("read-max-mib", "readMaxMiB", k.readMaxMiB, 1, 64, &o.ReadMaxMiB),
		set("read-retries", "readRetries", k.readRetries, 0, 3, &o.ReadRetries),
	} {
		if err != nil {
			return o, authority.KernelOptionsView{}, err
		}
	}
	// The limits' own flags: their values are applied by limitFlags.apply,
	// from the flag (given) or from here (not given).
	if given(cmd, "read-timeout", "SISYPHUS_READ_TIMEOUT") {
		o.ReadTimeoutMs, src["readTimeoutMs"] = int(l.readTimeout/time.Millisecond), "--read-timeout"
	}
	if given(cmd, "max-template-size", "SISYPHUS_MAX_TEMPLATE_SIZE") {
		src["templateMaxMiB"] = "--max-template-size"
	}
	originSrc := "default"
	if len(read.AllowedOrigins) > 0 {
		originSrc = "configuration"
	}
	if cmd.Flags().Lookup("allow-origin") != nil && cmd.Flags().Changed("allow-origin") {
		o.AllowedOrigins = nil
		for _, s := range k.origins {
			if !kernelopts.ValidOrigin(s) {
				return o, authority.KernelOptionsView{}, fmt.Errorf("--allow-origin %q: want an origin like https://app.example (scheme and host only)", s)
			}
			o.AllowedOrigins = append(o.AllowedOrigins, s)
		}
		originSrc = "--allow-origin"
	}
	view := authority.KernelOptionsView{File: kernelopts.File, Notes: notes}
	for _, f := range kernelopts.Fields {
		val := strconv.Itoa(f.Get(o))
		if f.Name == "templateMaxMiB" && src[f.Name] == "--max-template-size" {
			val = l.maxTemplate
		}
		if f.Unit != "" && !strings.HasPrefix(src[f.Name], "--max-template") {
			val += " " + f.Unit
		}
		view.Options = append(view.Options, authority.KernelOptionView{Name: f.Name, Value: val, Source: src[f.Name],
			Range: fmt.Sprintf("%d–%d, default %d", f.Min, f.Max, f.Default), Meaning: f.Meaning})
	}
	origins := "none (the server's own origin only)"
	if len(o.AllowedOrigins) > 0 {
		origins = strings.Join(o.AllowedOrigins, ", ")
	}
	view.Options = append(view.Options, authority.KernelOptionView{Name: "allowedOrigins", Value: origins, Source: originSrc,
		Range: fmt.Sprintf("at most %d", kernelopts.MaxOrigins), Meaning: "browser origins allowed besides the server's own"})
	return o, view, nil
}

// applyKernelOptions reads the kernel options through c, lets the flags
// override them, and sets them on the service's configuration (after
// limitFlags.apply, whose flags it leaves alone when given). It returns the
// kernel client with the read retries in force.
func applyKernelOptions(cmd *cobra.Command, c *siyuan.Client, log *slog.Logger, k *kernelOptionFlags, l *limitFlags, cfg *authority.ServiceConfig) (*siyuan.Client, []string, error) {
	read, notes := readKernelOptions(cmd.Context(), c, log)
	o, view, err := effectiveKernelOptions(cmd, read, notes, k, l)
	if err != nil {
		return nil, nil, err
	}
	cfg.Limits.ReadCalls = o.ReadMaxRequests
	cfg.Limits.ReadBytes = int64(o.ReadMaxMiB) << 20
	if !given(cmd, "read-timeout", "SISYPHUS_READ_TIMEOUT") {
		cfg.Limits.ReadTimeout = time.Duration(o.ReadTimeoutMs) * time.Millisecond
	}
	if !given(cmd, "max-template-size", "SISYPHUS_MAX_TEMPLATE_SIZE") {
		cfg.MaxTemplateBytes = o.TemplateMaxMiB << 20
	}
	cfg.KernelOptions = view
	c = c.WithReadAttempts(o.ReadRetries + 1)
	cfg.Kernel = c
	return c, o.AllowedOrigins, nil
}

// given reports whether the person set a limit's flag or its environment
// variable: either wins over the workspace's kernel options.
func given(cmd *cobra.Command, flag, env string) bool {
	return cmd.Flags().Changed(flag) || os.Getenv(env) != ""
}
