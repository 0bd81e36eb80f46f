// `bronzectl completion bash|zsh|fish`: shell completion scripts generated from the command tree
// itself (commands, aliases, flags, flag values, argument choices), so they never drift from the CLI.
//
//   source <(bronzectl completion bash)          # ~/.bashrc
//   source <(bronzectl completion zsh)           # ~/.zshrc, after compinit
//   bronzectl completion fish | source           # ~/.config/fish/config.fish
//
// Each script finds the command path typed so far (skipping flags and the values of flags that
// take one) and offers that command's subcommands, flags or flag values.
import { Argument, type Command, type Option } from 'commander';
import { definitionSpec } from '../../contract/resources/definition.ts';
import { RESOURCE_DEFINITIONS } from '../../contract/resources/registry.ts';
import type { Ctx } from '../session.ts';

interface Flag {
  names: string[];
  takesValue: boolean;
  choices: string[];
  description: string;
}

interface Node {
  /** "/" for the root, "/config/new" for `config new`. */
  path: string;
  description: string;
  /** Names that select this node from its parent (name and aliases). */
  names: string[];
  flags: Flag[];
  /** Values for its positional arguments (e.g. service actions, resource types). */
  argValues: string[];
  children: Node[];
}

function flagOf(o: Option): Flag {
  return {
    names: [o.short, o.long].filter((n): n is string => !!n),
    takesValue: o.required || o.optional,
    choices: o.argChoices ?? [],
    description: o.description,
  };
}

/** Resource names worth offering to `get`: every name of every type in the registry but the dotted ones (the plural, display type, aliases). */
export function resourceNames(): string[] {
  return [...new Set(RESOURCE_DEFINITIONS.flatMap((d) => definitionSpec(d).allAliases.filter((n) => !n.includes('.'))))].sort();
}

export function commandTree(cmd: Command, parent = ''): Node {
  const path = cmd.parent ? `${parent === '/' ? '' : parent}/${cmd.name()}` : '/';
  const args = (cmd.registeredArguments as readonly Argument[]).flatMap((a) => a.argChoices ?? []);
  if (path === '/get') args.push(...resourceNames());
  return {
    path,
    description: cmd.description(),
    names: [cmd.name(), ...cmd.aliases()],
    flags: [...cmd.options.filter((o) => !o.hidden).map(flagOf), { names: ['-h', '--help'], takesValue: false, choices: [], description: 'display help for command' }],
    argValues: args,
    children: cmd.commands.filter((c) => c.name() !== 'help').map((c) => commandTree(c, path)),
  };
}

function walk(n: Node, f: (n: Node) => void): void {
  f(n);
  for (const c of n.children) walk(c, f);
}

const sq = (s: string) => `'${s.replace(/'/g, `'\\''`)}'`;
/** A description on one line, without the characters each shell's syntax gives meaning to. */
const desc = (s: string) => s.replace(/\s+/g, ' ').replace(/[`$"\\]/g, '').trim();

export function bashScript(root: Node): string {
  const globals = root.flags;
  const lines: string[] = [];
  const child: string[] = [];
  const valueFlags: string[] = [];
  const choices: string[] = [];
  const words: string[] = [];
  const flags: string[] = [];
  walk(root, (n) => {
    const fl = n === root ? n.flags : [...n.flags, ...globals];
    for (const c of n.children) for (const name of c.names) child.push(`        ${sq(`${n.path}|${name}`)}) echo ${sq(c.path)} ;;`);
    valueFlags.push(`        ${sq(n.path)}) echo ${sq(fl.filter((f) => f.takesValue).flatMap((f) => f.names).join(' '))} ;;`);
    for (const f of fl) if (f.choices.length > 0) for (const name of f.names) choices.push(`        ${sq(`${n.path}|${name}`)}) echo ${sq(f.choices.join(' '))} ;;`);
    words.push(`        ${sq(n.path)}) echo ${sq([...n.children.map((c) => c.names[0]!), ...n.argValues].join(' '))} ;;`);
    flags.push(`        ${sq(n.path)}) echo ${sq(fl.flatMap((f) => f.names).join(' '))} ;;`);
  });
  lines.push(
    '# bash completion for bronzectl                            -*- shell-script -*-',
    '# source <(bronzectl completion bash)',
    '',
    '__bronzectl_child() {',
    '    case "$1|$2" in',
    ...child,
    '    esac',
    '}',
    '',
    '__bronzectl_value_flags() {',
    '    case "$1" in',
    ...valueFlags,
    '    esac',
    '}',
    '',
    '__bronzectl_choices() {',
    '    case "$1|$2" in',
    ...choices,
    '        *) return 1 ;;',
    '    esac',
    '}',
    '',
    '__bronzectl_words() {',
    '    case "$1" in',
    ...words,
    '    esac',
    '}',
    '',
    '__bronzectl_flags() {',
    '    case "$1" in',
    ...flags,
    '    esac',
    '}',
    '',
    '_bronzectl() {',
    '    local cur prev word next cmdpath="/" i',
    '    COMPREPLY=()',
    '    cur="${COMP_WORDS[COMP_CWORD]}"',
    '    prev="${COMP_WORDS[COMP_CWORD-1]}"',
    '    for ((i = 1; i < COMP_CWORD; i++)); do',
    '        word="${COMP_WORDS[i]}"',
    '        case "$word" in -*) continue ;; esac',
    '        if [[ " $(__bronzectl_value_flags "$cmdpath") " == *" ${COMP_WORDS[i-1]} "* ]]; then continue; fi',
    '        next="$(__bronzectl_child "$cmdpath" "$word")"',
    '        if [[ -n "$next" ]]; then cmdpath="$next"; fi',
    '    done',
    '    if [[ " $(__bronzectl_value_flags "$cmdpath") " == *" $prev "* ]]; then',
    '        local values',
    '        if values="$(__bronzectl_choices "$cmdpath" "$prev")"; then',
    '            COMPREPLY=($(compgen -W "$values" -- "$cur"))',
    '        fi',
    '        return 0',
    '    fi',
    '    if [[ "$cur" == -* ]]; then',
    '        COMPREPLY=($(compgen -W "$(__bronzectl_flags "$cmdpath")" -- "$cur"))',
    '    else',
    '        COMPREPLY=($(compgen -W "$(__bronzectl_words "$cmdpath")" -- "$cur"))',
    '    fi',
    '    return 0',
    '}',
    '',
    'complete -o default -F _bronzectl bronzectl',
    '',
  );
  return lines.join('\n');
}

export function zshScript(root: Node): string {
  const globals = root.flags;
  const child: string[] = [];
  const valueFlags: string[] = [];
  const choices: string[] = [];
  const cmds: string[] = [];
  const args: string[] = [];
  const flags: string[] = [];
  const esc = (s: string) => s.replace(/:/g, '\\:');
  walk(root, (n) => {
    const fl = n === root ? n.flags : [...n.flags, ...globals];
    for (const c of n.children) for (const name of c.names) child.push(`    ${sq(`${n.path}|${name}`)}) print -r -- ${sq(c.path)} ;;`);
    valueFlags.push(`    ${sq(n.path)}) print -r -- ${sq(fl.filter((f) => f.takesValue).flatMap((f) => f.names).join(' '))} ;;`);
    for (const f of fl) if (f.choices.length > 0) for (const name of f.names) choices.push(`    ${sq(`${n.path}|${name}`)}) print -r -- ${sq(f.choices.join(' '))} ;;`);
    cmds.push(`    ${sq(n.path)}) print -rl -- ${n.children.map((c) => sq(`${esc(c.names[0]!)}:${desc(c.description)}`)).join(' ')} ;;`);
    args.push(`    ${sq(n.path)}) print -r -- ${sq(n.argValues.join(' '))} ;;`);
    flags.push(`    ${sq(n.path)}) print -rl -- ${fl.flatMap((f) => f.names.map((name) => sq(`${esc(name)}:${desc(f.description)}`))).join(' ')} ;;`);
  });
  return [
    '#compdef bronzectl',
    '# zsh completion for bronzectl: source <(bronzectl completion zsh) after compinit',
    '',
    '__bronzectl_child() {', '  case "$1|$2" in', ...child, '  esac', '}',
    '__bronzectl_value_flags() {', '  case "$1" in', ...valueFlags, '  esac', '}',
    '__bronzectl_choices() {', '  case "$1|$2" in', ...choices, '    *) return 1 ;;', '  esac', '}',
    '__bronzectl_cmds() {', '  case "$1" in', ...cmds, '  esac', '}',
    '__bronzectl_args() {', '  case "$1" in', ...args, '  esac', '}',
    '__bronzectl_flags() {', '  case "$1" in', ...flags, '  esac', '}',
    '',
    '_bronzectl() {',
    '  local cmdpath="/" word next prev i values',
    '  local -a vals items',
    '  for ((i = 2; i < CURRENT; i++)); do',
    '    word=${words[i]}',
    '    [[ $word == -* ]] && continue',
    '    [[ " $(__bronzectl_value_flags $cmdpath) " == *" ${words[i-1]} "* ]] && continue',
    '    next=$(__bronzectl_child $cmdpath $word)',
    '    [[ -n $next ]] && cmdpath=$next',
    '  done',
    '  prev=${words[CURRENT-1]}',
    '  if [[ " $(__bronzectl_value_flags $cmdpath) " == *" $prev "* ]]; then',
    '    if values=$(__bronzectl_choices $cmdpath $prev); then',
    '      vals=(${=values})',
    '      compadd -a vals',
    '    else',
    '      _files',
    '    fi',
    '    return',
    '  fi',
    '  if [[ $PREFIX == -* ]]; then',
    '    items=(${(f)"$(__bronzectl_flags $cmdpath)"})',
    "    _describe -t flags 'flag' items",
    '    return',
    '  fi',
    '  items=(${(f)"$(__bronzectl_cmds $cmdpath)"})',
    '  vals=(${=$(__bronzectl_args $cmdpath)})',
    "  (( ${#items} )) && _describe -t commands 'command' items",
    '  (( ${#vals} )) && compadd -a vals',
    '  (( ${#items} + ${#vals} )) || _files',
    '}',
    '',
    'if [ "$funcstack[1]" = "_bronzectl" ]; then',
    '  _bronzectl "$@"',
    'else',
    '  compdef _bronzectl bronzectl',
    'fi',
    '',
  ].join('\n');
}

export function fishScript(root: Node): string {
  const globals = root.flags;
  const child: string[] = [];
  const valueFlags: string[] = [];
  const out: string[] = [];
  walk(root, (n) => {
    const fl = n === root ? n.flags : [...n.flags, ...globals];
    for (const c of n.children) for (const name of c.names) child.push(`        case ${sq(`${n.path}|${name}`)}\n            echo ${sq(c.path)}`);
    valueFlags.push(`        case ${sq(n.path)}\n            echo ${fl.filter((f) => f.takesValue).flatMap((f) => f.names).map(sq).join(' ')}`);
    const at = `-n '__bronzectl_at ${n.path}'`;
    for (const c of n.children) out.push(`complete -c bronzectl ${at} -f -a ${sq(c.names[0]!)} -d ${sq(desc(c.description))}`);
    if (n.argValues.length > 0) out.push(`complete -c bronzectl ${at} -f -a ${sq(n.argValues.join(' '))}`);
    for (const f of n.flags) {
      const short = f.names.find((x) => /^-[^-]$/.test(x));
      const long = f.names.find((x) => x.startsWith('--'));
      const parts = ['complete -c bronzectl', n === root ? '' : at, short ? `-s ${short.slice(1)}` : '', long ? `-l ${long.slice(2)}` : ''];
      if (f.takesValue) parts.push(f.choices.length > 0 ? `-x -a ${sq(f.choices.join(' '))}` : '-r');
      parts.push(`-d ${sq(desc(f.description))}`);
      out.push(parts.filter(Boolean).join(' '));
    }
  });
  return [
    '# fish completion for bronzectl: bronzectl completion fish | source',
    '',
    'function __bronzectl_child',
    '    switch "$argv[1]|$argv[2]"',
    ...child,
    '    end',
    'end',
    '',
    'function __bronzectl_value_flags',
    '    switch "$argv[1]"',
    ...valueFlags,
    '    end',
    'end',
    '',
    '# The command path typed so far: "/", "/config", "/config/new", ...',
    'function __bronzectl_path',
    '    set -l tokens (commandline -opc)',
    '    set -l cmdpath /',
    '    set -l prev ""',
    '    for t in $tokens[2..-1]',
    "        if string match -q -- '-*' $t",
    '            set prev $t',
    '            continue',
    '        end',
    '        if contains -- $prev (__bronzectl_value_flags $cmdpath)',
    '            set prev $t',
    '            continue',
    '        end',
    '        set -l next (__bronzectl_child $cmdpath $t)',
    '        if test -n "$next"',
    '            set cmdpath $next',
    '        end',
    '        set prev $t',
    '    end',
    '    echo $cmdpath',
    'end',
    '',
    'function __bronzectl_at',
    '    test (__bronzectl_path) = $argv[1]',
    'end',
    '',
    'complete -c bronzectl -e',
    ...out,
    '',
  ].join('\n');
}

export function register(program: Command, ctx: Ctx): void {
  program
    .command('completion')
    .description('Output shell completion code for the specified shell (bash, zsh or fish)')
    .addArgument(new Argument('<shell>', 'the shell').choices(['bash', 'zsh', 'fish']))
    .action((shell: 'bash' | 'zsh' | 'fish') => {
      const tree = commandTree(program);
      ctx.io.stdout.write(shell === 'bash' ? bashScript(tree) : shell === 'zsh' ? zshScript(tree) : fishScript(tree));
    });
}
