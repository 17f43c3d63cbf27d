// `sudo` for the sandboxes of `hands serve`. E2B's templates give their user passwordless sudo,
// and programs written for them call it (`sudo apt-get …`, `sudo echo …`). A hands sandbox has
// one unprivileged identity and no way to gain another: bubblewrap maps a single uid and the
// seccomp filter refuses new user namespaces; docker runs the sandbox's uid with no
// capabilities and no-new-privileges. So this sudo does not switch users: it runs the command
// as the sandbox's user with sudo's usual variables — what needs real root (writing /usr,
// binding low ports) fails as it would for the user, and nothing is granted on the host.
export const SUDO_SCRIPT = `#!/bin/bash
# hands serve: the sandbox has one unprivileged user; sudo runs the command as that user.
usage() { echo "usage: sudo [-EHnSPk] [-u user] [-i | -s] [--] [command [args...]]" >&2; exit 1; }
login=0 shell=0 target=root
while [ $# -gt 0 ]; do
  case "$1" in
    --) shift; break ;;
    -u) [ $# -ge 2 ] || usage; target=$2; shift 2 ;;
    -u*) target=\${1#-u}; shift ;;
    --user=*) target=\${1#--user=}; shift ;;
    -i|--login) login=1; shift ;;
    -s|--shell) shell=1; shift ;;
    -E|-H|-n|-S|-P|-k|-b|--preserve-env|--preserve-env=*|--non-interactive|--stdin|--set-home) shift ;;
    -K|-v|--validate|--remove-timestamp) exit 0 ;;
    -V|--version) echo "sudo (hands serve: runs commands as the sandbox's own user)"; exit 0 ;;
    -h|--help) usage ;;
    -l|--list) echo "User $(id -un) may run the following commands: (ALL : ALL) NOPASSWD: ALL (as itself)"; exit 0 ;;
    -*) echo "sudo: option $1 is not supported here" >&2; exit 1 ;;
    *) break ;;
  esac
done
case "$target" in
  root|0|"$(id -un)"|"#0"|"#$(id -u)") ;;
  *) echo "sudo: unknown user $target" >&2; exit 1 ;;
esac
export SUDO_USER="$(id -un)" SUDO_UID="$(id -u)" SUDO_GID="$(id -g)" SUDO_COMMAND="$*"
if [ "$login" = 1 ] || [ "$shell" = 1 ]; then
  if [ $# -gt 0 ]; then exec /bin/bash -c "$*"; fi
  if [ "$login" = 1 ]; then cd "$HOME" 2>/dev/null; exec /bin/bash -l; fi
  exec /bin/bash
fi
[ $# -gt 0 ] || usage
exec "$@"
`;
