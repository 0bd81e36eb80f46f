// Classic BPF programs as talosctl takes them for `pcap --bpf-filter`: the output of
// `tcpdump -dd <expression>` (one `{ 0x28, 0, 0, 0x0000000c },` line per instruction), which
// becomes PacketCaptureRequest.bpf_filter. Bronze compiles no filter expressions itself (no
// maintained npm library does, and talosctl does not either): compile them with tcpdump -dd,
// as talosctl's own help says.

export interface BpfInstruction {
  op: number;
  jt: number;
  jf: number;
  k: number;
}

/** The kernel's limit on a classic BPF program (BPF_MAXINSNS). */
export const BPF_MAXINSNS = 4096;

const LINE = /^\{\s*0x([0-9a-fA-F]+)\s*,\s*(\d+)\s*,\s*(\d+)\s*,\s*0x([0-9a-fA-F]+)\s*\},?$/;

/** Parses `tcpdump -dd` output; throws naming the line that is not an instruction. */
export function parseTcpdumpDd(text: string): BpfInstruction[] {
  const out: BpfInstruction[] = [];
  const lines = text.split('\n');
  lines.forEach((raw, i) => {
    const line = raw.trim();
    if (!line) return;
    const m = LINE.exec(line);
    if (!m) throw new Error(`bpf filter line ${i + 1}: ${JSON.stringify(line)} is not an instruction in tcpdump -dd form ({ 0x28, 0, 0, 0x0000000c },)`);
    const ins = { op: parseInt(m[1]!, 16), jt: Number(m[2]), jf: Number(m[3]), k: parseInt(m[4]!, 16) };
    if (ins.op > 0xffff || ins.jt > 255 || ins.jf > 255 || ins.k > 0xffffffff) throw new Error(`bpf filter line ${i + 1}: ${JSON.stringify(line)} is out of range (op 16 bits, jt and jf 8 bits, k 32 bits)`);
    out.push(ins);
  });
  if (out.length > BPF_MAXINSNS) throw new Error(`bpf filter: ${out.length} instructions, more than the kernel takes (${BPF_MAXINSNS})`);
  return out;
}

/** The sock_filter array the kernel takes (SO_ATTACH_FILTER): 8 bytes per instruction. */
export function encodeSockFilter(prog: readonly BpfInstruction[]): Buffer {
  const b = Buffer.alloc(prog.length * 8);
  prog.forEach((ins, i) => {
    if (ins.op > 0xffff || ins.jt > 255 || ins.jf > 255 || ins.k > 0xffffffff || [ins.op, ins.jt, ins.jf, ins.k].some((v) => !Number.isInteger(v) || v < 0)) {
      throw new Error(`bpf instruction ${i}: out of range (op ${ins.op}, jt ${ins.jt}, jf ${ins.jf}, k ${ins.k})`);
    }
    b.writeUInt16LE(ins.op, i * 8);
    b.writeUInt8(ins.jt, i * 8 + 2);
    b.writeUInt8(ins.jf, i * 8 + 3);
    b.writeUInt32LE(ins.k >>> 0, i * 8 + 4);
  });
  return b;
}
