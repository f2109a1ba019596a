# Source this file (bash, zsh or sh), from the repository root or by its path:
#
#   . scripts/node/env.sh
#
# It runs scripts/node/ensure.sh and, when that installed or found a newer Node.js in .tools/node,
# puts it first on this shell's PATH, so `node`, `npm`, `npx` and every npm script run on it. When
# the machine's own node is already new enough it changes nothing. .ci/run does exactly this.
tessera_node_env="${BASH_SOURCE:-$0}"
case "$tessera_node_env" in
  */env.sh) ;;
  *) tessera_node_env=scripts/node/env.sh ;;
esac
if tessera_node_bin="$(bash "${tessera_node_env%/env.sh}/ensure.sh")"; then
  if [ -n "$tessera_node_bin" ]; then
    case ":$PATH:" in
      *":$tessera_node_bin:"*) ;;
      *) PATH="$tessera_node_bin:$PATH" && export PATH ;;
    esac
  fi
  unset tessera_node_env tessera_node_bin
else
  unset tessera_node_env tessera_node_bin
  return 1 2>/dev/null || exit 1
fi
