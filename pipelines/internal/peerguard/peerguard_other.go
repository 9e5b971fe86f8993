//go:build !linux

package peerguard

import "net/netip"

func supported() error { return ErrUnsupported }

func peerOwner(local, remote netip.AddrPort) (int, error) { return -1, ErrUnsupported }
