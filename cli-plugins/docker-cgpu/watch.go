package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"
	"strings"
	"syscall"
	"time"

	"github.com/docker/cli/cli/command"
	"golang.org/x/sys/unix"
)

// The terminal sequences top uses: the alternate screen (the shell's screen comes back
// on exit), cursor hidden, home, clear to the end of the line and of the screen.
const (
	enterScreen = "\x1b[?1049h\x1b[?25l"
	leaveScreen = "\x1b[?25h\x1b[?1049l"
	home        = "\x1b[H"
	clearLine   = "\x1b[K"
	clearBelow  = "\x1b[J"
)

// watch draws frame every interval until ctx ends (Ctrl-C) or q is typed. On a terminal
// it redraws in place on the alternate screen, each line cut to the terminal's width so
// nothing wraps or scrolls, and puts the terminal back as it was on the way out, however
// it ends. Elsewhere (a pipe) it writes one frame after another.
func watch(ctx context.Context, dockerCLI command.Cli, interval time.Duration, frame func(io.Writer) error) error {
	out := dockerCLI.Out()
	if !out.IsTerminal() {
		return watchPlain(ctx, out, interval, frame)
	}
	in := dockerCLI.In()
	restore, keys := keyboard(in, int(in.FD()), in.IsTerminal())
	defer restore()
	fmt.Fprint(out, enterScreen)
	defer fmt.Fprint(out, leaveScreen)
	resized := make(chan os.Signal, 1)
	signal.Notify(resized, syscall.SIGWINCH)
	defer signal.Stop(resized)
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		h, w := out.GetTtySize()
		var b bytes.Buffer
		fmt.Fprintf(&b, "docker cgpu stat, every %s, %s (q or Ctrl-C quits)\n\n", interval, time.Now().Format("15:04:05"))
		if err := frame(&b); err != nil {
			fmt.Fprintf(&b, "cgpu: %v\n", err)
		}
		fmt.Fprint(out, home+fit(b.String(), int(h), int(w))+clearBelow)
		select {
		case <-ctx.Done():
			return nil
		case <-keys:
			return nil
		case <-resized:
		case <-tick.C:
		}
	}
}

// fit cuts text to h lines of at most w characters, each ending by clearing the rest of
// its line: a shorter frame leaves nothing of the last one behind.
func fit(text string, h, w int) string {
	lines := strings.Split(strings.TrimRight(text, "\n"), "\n")
	if h > 0 && len(lines) > h {
		lines = lines[:h]
	}
	for i, l := range lines {
		if r := []rune(l); w > 0 && len(r) > w {
			lines[i] = string(r[:w])
		}
	}
	return strings.Join(lines, clearLine+"\r\n") + clearLine
}

func watchPlain(ctx context.Context, out io.Writer, interval time.Duration, frame func(io.Writer) error) error {
	tick := time.NewTicker(interval)
	defer tick.Stop()
	for {
		if err := frame(out); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-tick.C:
		}
	}
}

// keyboard makes a terminal stdin deliver keys one by one without echoing them (so a key
// does not scribble on the screen), keeping Ctrl-C a signal; keys yields on q. restore
// puts the terminal's settings back.
func keyboard(in io.Reader, fd int, isTerminal bool) (restore func(), keys <-chan struct{}) {
	quit := make(chan struct{})
	if !isTerminal {
		return func() {}, quit
	}
	saved, err := unix.IoctlGetTermios(fd, unix.TCGETS)
	if err != nil {
		return func() {}, quit
	}
	raw := *saved
	raw.Lflag &^= unix.ECHO | unix.ICANON
	raw.Cc[unix.VMIN], raw.Cc[unix.VTIME] = 1, 0
	if err := unix.IoctlSetTermios(fd, unix.TCSETS, &raw); err != nil {
		return func() {}, quit
	}
	go func() {
		buf := make([]byte, 1)
		for {
			if n, err := in.Read(buf); err != nil || n == 1 && (buf[0] == 'q' || buf[0] == 'Q') {
				close(quit)
				return
			}
		}
	}()
	return func() { unix.IoctlSetTermios(fd, unix.TCSETS, saved) }, quit
}
