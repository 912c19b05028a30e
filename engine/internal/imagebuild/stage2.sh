#!/bin/sh
# The second stage of Sandtray's image build from Debian's mirror, run as
# root in a container of the first stage (every required package's files
# unpacked, no network). As debootstrap's second stage does: dpkg installs
# the core packages one by one, then unpacks and configures the rest of the
# required ones, then the packages Sandtray wants. "step:" lines are the
# builder's progress. MIRROR and SUITE name where the packages came from,
# for apt's sources.list.
set -eu
export DEBIAN_FRONTEND=noninteractive DEBCONF_NONINTERACTIVE_SEEN=true LC_ALL=C
export PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
cd /var/cache/sandtray
# No fsync per file: a failed build is thrown away whole, and fsync on a
# container's overlay is most of dpkg's time.
dpkg() { command dpkg --force-unsafe-io "$@"; }

debs() { for n in "$@"; do echo "debs/$n.deb"; done; }
core() { for n in "$@"; do [ ! -f "debs/$n.deb" ] || dpkg --force-depends --install "debs/$n.deb"; done; }
base=$(cat base.list)
rest=$(cat rest.list)

echo "step: Installing Debian's core packages"
/sbin/ldconfig
ln -sf mawk /usr/bin/awk
core base-passwd base-files dpkg
[ -e /etc/localtime ] || ln -sf /usr/share/zoneinfo/UTC /etc/localtime
core libc6 perl-base
rm -f /usr/bin/awk
core mawk debconf

echo "step: Unpacking Debian's required packages"
# shellcheck disable=SC2046
dpkg --force-depends --unpack $(debs $base)
printf '#!/bin/sh\nexit 101\n' >/usr/sbin/policy-rc.d
chmod 755 /usr/sbin/policy-rc.d
mv /sbin/start-stop-daemon /sbin/start-stop-daemon.REAL
printf '#!/bin/sh\necho "Warning: fake start-stop-daemon called, doing nothing"\n' >/sbin/start-stop-daemon
chmod 755 /sbin/start-stop-daemon

echo "step: Configuring Debian's required packages"
dpkg --configure --pending --force-configure-any --force-depends

if [ -n "$rest" ]; then
	echo "step: Installing Python, Node.js, gcc and what they need"
	# shellcheck disable=SC2046
	dpkg --force-depends --force-overwrite --force-confold --skip-same-version --unpack $(debs $rest)
	dpkg --force-confold --configure -a
fi
mv /sbin/start-stop-daemon.REAL /sbin/start-stop-daemon
rm -f /usr/sbin/policy-rc.d

echo "step: Cleaning up"
echo "deb $MIRROR $SUITE main" >/etc/apt/sources.list
apt-get clean
rm -rf /var/lib/apt/lists/* /var/cache/apt/*.bin /var/log/dpkg.log /var/log/apt
mkdir -p /workspace
dpkg --audit
echo "step: done"
