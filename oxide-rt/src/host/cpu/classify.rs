//! Decides from a kernel's PTX whether the CPU executor must run its threads as fibers.
//!
//! A kernel needs fibers when its `.entry`, or any `.func` it calls (transitively), contains an
//! instruction at which threads of a block or warp wait for each other. Everything else runs as
//! a plain loop. An indirect call (`call %rd4, ...`: `dyn` methods, e.g. core's formatting in a
//! panic path) may reach any function whose address is taken anywhere in the module (an operand
//! of an instruction or a global initialiser such as a vtable), so it counts as a call to all of
//! them. When in doubt (entry missing) the answer is "fibers": that is only slower, never wrong.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex};

/// Instruction prefixes that make threads meet: block barriers and warp collectives.
const COLLECTIVE: &[&str] = &[
    "bar.",
    "barrier.",
    "shfl.",
    "vote.",
    "activemask",
    "match.",
    "redux.sync",
    "elect.sync",
    "mma.",
    "ldmatrix.",
    "mbarrier.",
];

#[derive(Default)]
struct Function {
    collective: bool,
    indirect_call: bool,
    calls: Vec<String>,
    /// Identifiers its instructions use (operands), e.g. the shared arrays it addresses.
    uses: HashSet<String>,
    /// Bytes of its `.local` depot (`__local_depotN`): its stack frame.
    local_bytes: u64,
    /// `.shared` arrays declared inside its body (LLVM moves an array only one kernel uses
    /// there): name, bytes, alignment.
    shared: Vec<(String, u64, u64)>,
}

/// What a kernel needs from a block and a thread, read from its PTX: static shared memory
/// (every module-scope `.shared` array the kernel or a function it calls uses, laid out in
/// declaration order with its alignment, as ptxas does) and the largest stack frame
/// (`.local` depot) among those functions.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub(crate) struct Footprint {
    pub static_shared: u64,
    pub local_bytes: u64,
}

/// A module's PTX, parsed once: every kernel of it is classified from this.
pub(crate) struct Module {
    parsed: Parsed,
}

/// The parsed form of `ptx`, shared by every kernel of the module: the first kernel launched
/// parses it, the others find it here (the text of a big module is megabytes).
pub(crate) fn module(ptx: &'static str) -> Arc<Module> {
    static MODULES: Mutex<Vec<(usize, usize, Arc<Module>)>> = Mutex::new(Vec::new());
    let key = (ptx.as_ptr() as usize, ptx.len());
    let mut modules = MODULES.lock().unwrap_or_else(|e| e.into_inner());
    if let Some((.., m)) = modules.iter().find(|(p, l, _)| (*p, *l) == key) {
        return m.clone();
    }
    let m = Arc::new(Module { parsed: parse(ptx) });
    modules.push((key.0, key.1, m.clone()));
    m
}

impl Module {
    /// The [`Footprint`] of kernel `entry`; `None` when the PTX has no such entry.
    pub(crate) fn footprint(&self, entry: &str) -> Option<Footprint> {
        let parsed = &self.parsed;
        if !parsed.entries.contains(entry) {
            return None;
        }
        let mut used = HashSet::new();
        let mut local_bytes = 0;
        let mut arrays: Vec<&(String, u64, u64)> = Vec::new();
        for name in reachable(parsed, entry) {
            if let Some(f) = parsed.functions.get(&name) {
                used.extend(f.uses.iter().cloned());
                local_bytes = local_bytes.max(f.local_bytes);
                arrays.extend(f.shared.iter());
            }
        }
        arrays.extend(parsed.shared.iter().filter(|(name, ..)| used.contains(name)));
        let mut static_shared = 0u64;
        for (_, size, align) in arrays {
            static_shared = static_shared.next_multiple_of((*align).max(1)) + size;
        }
        Some(Footprint { static_shared, local_bytes })
    }

    /// Whether kernel `entry` uses block or warp collectives (see the module docs).
    pub(crate) fn needs_fibers(&self, entry: &str) -> bool {
        let parsed = &self.parsed;
        if !parsed.entries.contains(entry) {
            return true;
        }
        // Calls to functions without a body (`.extern .func vprintf`) do not synchronise.
        reachable(parsed, entry).iter().any(|name| parsed.functions.get(name).is_some_and(|f| f.collective))
    }
}

/// The [`Footprint`] of kernel `entry` of `ptx` (parsed afresh).
#[cfg(test)]
pub(crate) fn footprint(ptx: &str, entry: &str) -> Option<Footprint> {
    Module { parsed: parse(ptx) }.footprint(entry)
}

/// `entry` and every function it may call, directly or through an indirect call.
fn reachable(parsed: &Parsed, entry: &str) -> HashSet<String> {
    let address_taken: Vec<String> =
        parsed.functions.keys().filter(|f| parsed.mentioned.contains(*f)).cloned().collect();
    let mut seen = HashSet::new();
    let mut todo = vec![entry.to_string()];
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        if let Some(f) = parsed.functions.get(&name) {
            todo.extend(f.calls.iter().cloned());
            if f.indirect_call {
                todo.extend(address_taken.iter().cloned());
            }
        }
    }
    seen
}

/// Whether kernel `entry` of `ptx` (parsed afresh) uses block or warp collectives.
#[cfg(test)]
pub(crate) fn needs_fibers(ptx: &str, entry: &str) -> bool {
    Module { parsed: parse(ptx) }.needs_fibers(entry)
}

struct Parsed {
    /// Every `.entry`/`.func` defined (with a body) in the module.
    functions: HashMap<String, Function>,
    entries: HashSet<String>,
    /// Identifiers used as operands or in initialisers, i.e. not as a header or a direct callee.
    mentioned: HashSet<String>,
    /// Module-scope `.shared` arrays (not the `.extern` dynamic window): name, bytes, alignment.
    shared: Vec<(String, u64, u64)>,
}

fn parse(ptx: &str) -> Parsed {
    let text = strip_comments(ptx);
    let mut functions: HashMap<String, Function> = HashMap::new();
    let mut entries = HashSet::new();
    let mut mentioned = HashSet::new();
    let mut shared = Vec::new();
    // The function whose body is open, kept out of the map until it closes (no lookup per line).
    let mut current: Option<(String, Function)> = None;
    let mut pending: Option<(String, bool)> = None; // header seen, body not yet opened
    let mut depth = 0usize;
    // Statements end at `;`, `{` or `}`; keep the delimiter to track nesting. These are ASCII
    // bytes, which never occur inside a multi-byte character, so a byte scan is exact.
    // `str::find` of a `char` is core's `memchr`, fast also in unoptimised builds (where a loop
    // over the bytes here is not): the next of each delimiter is kept and found again once used.
    let bytes = text.as_bytes();
    let after = |from: usize, c: char| text.get(from..).and_then(|t| t.find(c)).map_or(text.len(), |p| from + p);
    let mut next = [after(0, ';'), after(0, '{'), after(0, '}')];
    let mut start = 0;
    loop {
        let i = next[0].min(next[1]).min(next[2]);
        if i >= bytes.len() {
            break;
        }
        let ch = bytes[i];
        let k = match ch {
            b';' => 0,
            b'{' => 1,
            _ => 2,
        };
        next[k] = after(i + 1, [';', '{', '}'][k]);
        let stmt = text[start..i].trim_ascii();
        start = i + 1;
        if depth == 0 {
            if let Some((name, is_entry)) = header(stmt) {
                pending = Some((name, is_entry));
            } else if let Some(var) = variable(stmt, ".shared") {
                shared.push(var);
            } else {
                mention(stmt, &mut mentioned); // e.g. a vtable: `.global .u64 vt[2] = {f, g}`
            }
            match ch {
                b'{' => {
                    if let Some((name, is_entry)) = pending.take() {
                        if is_entry {
                            entries.insert(name.clone());
                        }
                        let f = functions.remove(&name).unwrap_or_default();
                        current = Some((name, f));
                    }
                    depth = 1;
                }
                // A declaration (`.func f(...) .noreturn;`) has no body.
                _ => pending = None,
            }
            continue;
        }
        if let Some((_, f)) = current.as_mut() {
            // Declarations start with their state space; instructions never start with `.`.
            let declaration = stmt.starts_with('.');
            if let Some((_, bytes, _)) = declaration.then(|| variable(stmt, ".local")).flatten() {
                f.local_bytes += bytes;
            } else if let Some(var) = declaration.then(|| variable(stmt, ".shared")).flatten() {
                f.shared.push(var);
            } else if !declaration && !stmt.is_empty() {
                scan_instruction(stmt, f);
            }
        }
        match ch {
            b'{' => depth += 1,
            b'}' => {
                depth -= 1;
                if depth == 0 {
                    if let Some((name, f)) = current.take() {
                        functions.insert(name, f);
                    }
                }
            }
            _ => {}
        }
    }
    if let Some((name, f)) = current.take() {
        functions.insert(name, f); // a body left open at the end of the text
    }
    // What instructions name counts as mentioned too (gathered once here rather than per word).
    for f in functions.values() {
        for word in &f.uses {
            if !mentioned.contains(word) {
                mentioned.insert(word.clone());
            }
        }
    }
    Parsed { functions, entries, mentioned, shared }
}

/// A defined (not `.extern`) variable declaration of state space `space`:
/// `.shared .align 4 .b8 NAME[1024]` → (NAME, 1024, 4). Multi-dimensional arrays multiply.
fn variable(stmt: &str, space: &str) -> Option<(String, u64, u64)> {
    let decl = stmt.split('=').next().unwrap_or(stmt);
    let tokens: Vec<&str> = decl.split_whitespace().collect();
    if !tokens.contains(&space) || tokens.contains(&".extern") {
        return None;
    }
    let elem = tokens.iter().find_map(|t| {
        let bits: u64 = t.strip_prefix('.')?.get(1..)?.parse().ok()?;
        matches!(t.as_bytes().get(1), Some(b'b' | b'u' | b's' | b'f')).then_some(bits / 8)
    })?;
    let align = tokens
        .iter()
        .position(|t| *t == ".align")
        .and_then(|i| tokens.get(i + 1))
        .and_then(|a| a.parse().ok())
        .unwrap_or(elem);
    let last = tokens.last()?;
    let name: String = last.chars().take_while(|c| *c != '[').collect();
    let mut count = 1u64;
    for dim in last.split('[').skip(1) {
        count = count.checked_mul(dim.trim_end_matches(']').parse().ok()?)?;
    }
    (!name.is_empty()).then_some((name, elem * count, align))
}

fn mention(text: &str, mentioned: &mut HashSet<String>) {
    for word in symbols(text) {
        if !mentioned.contains(word) {
            mentioned.insert(word.to_string());
        }
    }
}

/// The words of `text` that can name a function or a variable: not registers (`%r1`), labels
/// (`$L__BB0_3`), directives or opcode suffixes (`.b32`) or numbers. Only these are kept, so
/// that parsing a big module allocates little.
fn symbols(text: &str) -> impl Iterator<Item = &str> {
    // A byte scan (identifiers are ASCII; a non-ASCII byte ends a word, at a char boundary).
    let bytes = text.as_bytes();
    let mut i = 0;
    std::iter::from_fn(move || {
        while i < bytes.len() {
            while i < bytes.len() && !is_ident_byte(bytes[i]) {
                i += 1;
            }
            let start = i;
            while i < bytes.len() && is_ident_byte(bytes[i]) {
                i += 1;
            }
            if start < i && (bytes[start].is_ascii_alphabetic() || bytes[start] == b'_') {
                return Some(&text[start..i]);
            }
        }
        None
    })
}

/// `s` up to its first ASCII whitespace (a loop over bytes: this runs once per instruction).
fn first_word(s: &str) -> &str {
    let bytes = s.as_bytes();
    let mut end = 0;
    while end < bytes.len() && !bytes[end].is_ascii_whitespace() {
        end += 1;
    }
    &s[..end]
}

fn is_ident_byte(b: u8) -> bool {
    // A table: this runs for every byte of every instruction, also in unoptimised builds.
    const TABLE: [bool; 256] = {
        let mut t = [false; 256];
        let mut b = 0;
        while b < 256 {
            let c = b as u8;
            t[b] = c.is_ascii_alphanumeric() || matches!(c, b'_' | b'$' | b'%' | b'.');
            b += 1;
        }
        t
    };
    TABLE[b as usize]
}

/// The function name declared by a `.entry`/`.func` header statement, if it is one.
fn header(stmt: &str) -> Option<(String, bool)> {
    let tokens: Vec<&str> = stmt.split(|c: char| c.is_whitespace() || c == '(').filter(|t| !t.is_empty()).collect();
    let pos = tokens.iter().position(|t| *t == ".entry" || *t == ".func")?;
    let is_entry = tokens[pos] == ".entry";
    // `.func (.param .b32 ret) name(...)`: skip a parenthesised return list.
    let after = &stmt[stmt.find(tokens[pos]).map(|p| p + tokens[pos].len())?..];
    let after = after.trim_start();
    let after = if let Some(rest) = after.strip_prefix('(') { &rest[rest.find(')')? + 1..] } else { after };
    let name: String = after.trim_start().chars().take_while(|c| is_ident(*c)).collect();
    (!name.is_empty()).then_some((name, is_entry))
}

fn is_ident(c: char) -> bool {
    c.is_ascii_alphanumeric() || matches!(c, '_' | '$' | '%' | '.')
}

fn scan_instruction(stmt: &str, f: &mut Function) {
    let mut s = stmt;
    // Labels (`$L__BB0_3:`) and guard predicates (`@%p1`, `@!%p1`).
    while let Some(colon) = s.find(':') {
        let label = &s[..colon];
        // `::` belongs to an opcode (`mbarrier.try_wait.parity.shared::cta.b64`), not a label.
        let scope = s[colon + 1..].starts_with(':');
        if !scope && label.trim().chars().all(is_ident) && !label.trim().is_empty() {
            s = s[colon + 1..].trim_start();
        } else {
            break;
        }
    }
    if s.starts_with('@') {
        s = s[first_word(s).len()..].trim_ascii_start();
    }
    let opcode = first_word(s);
    if COLLECTIVE.iter().any(|p| opcode.starts_with(p)) {
        f.collective = true;
    } else if opcode == "call" || opcode.starts_with("call.") {
        // `call.uni (retval0), name, (param0, ...);` or `call name, (...)`; an indirect call
        // names a register (`%rd4`) instead.
        let mut rest = s[opcode.len()..].trim_start();
        if let Some(r) = rest.strip_prefix('(') {
            rest = r.find(')').map_or("", |p| r[p + 1..].trim_start().trim_start_matches(',').trim_start());
        }
        let callee: String = rest.chars().take_while(|c| is_ident(*c)).collect();
        if callee.is_empty() || callee.starts_with('%') {
            f.indirect_call = true;
        } else {
            f.calls.push(callee);
        }
    } else {
        let operands = &s[opcode.len()..];
        for word in symbols(operands) {
            if !f.uses.contains(word) {
                f.uses.insert(word.to_string());
            }
        }
    }
}

/// `ptx` with `//` comments removed and each `/* */` comment replaced by a space, in one pass:
/// a comment opener is looked for only where the previous comment ended, so the work is
/// linear in the length of the text (searching the rest of the text for `/*` at every `//`
/// made it quadratic: seconds on a 2 MB module).
fn strip_comments(ptx: &str) -> String {
    let bytes = ptx.as_bytes();
    let mut out = String::with_capacity(ptx.len());
    let (mut copied, mut i) = (0, 0);
    // Jump from `/` to `/` (core's `memchr`, see `parse`).
    while let Some(slash) = ptx.get(i..).and_then(|t| t.find('/')) {
        i += slash;
        if i + 1 >= bytes.len() {
            break;
        }
        if !matches!(bytes[i + 1], b'/' | b'*') {
            i += 1;
            continue;
        }
        out.push_str(&ptx[copied..i]);
        let end = if bytes[i + 1] == b'/' {
            // Keep the newline: it still separates what comes before from what follows.
            ptx[i..].find('\n').map_or(ptx.len(), |n| i + n)
        } else {
            out.push(' ');
            ptx[i + 2..].find("*/").map_or(ptx.len(), |e| i + 2 + e + 2)
        };
        copied = end;
        i = end;
    }
    out.push_str(&ptx[copied..]);
    out
}

#[cfg(test)]
mod tests {
    use super::needs_fibers;

    const PTX: &str = r#"
//
// Generated by LLVM NVPTX Back-End
//
.version 7.8
.target sm_90
.address_size 64

.extern .func  (.param .b32 func_retval0) vprintf
(
	.param .b64 vprintf_param_0,
	.param .b64 vprintf_param_1
)
;
.func _ZN4core9panicking18panic_bounds_check
(
	.param .b64 p0
)
.noreturn;
.func  (.param .b32 func_retval0) helper_sync(
	.param .b32 helper_sync_param_0
)
{
	.reg .b32 	%r<3>;
	ld.param.b32 	%r1, [helper_sync_param_0];
	bar.sync 	0;  // bar.sync inside a helper
	st.param.b32 	[func_retval0], %r1;
	ret;
}
.func leaf()
{
	ret;
}
.func calls_leaf()
{
	{ // callseq 0, 0
	call.uni leaf, ();
	} // callseq 0
	ret;
}
.func _ZN4core9panicking18panic_bounds_check(.param .b64 p0) .noreturn
{
	trap;
}
	// .globl	plain                   // shfl.sync in a comment does not count
.visible .entry plain(
	.param .u64 plain_param_0
)
{
	.reg .pred 	%p<2>;
	/* vote.sync.all.pred in a block comment */
	mov.u32 	%r2, %tid.x;
	@%p1 bra 	$L__BB0_3;
	{ // callseq 1, 0
	.param .b64 param0;
	call.uni _ZN4core9panicking18panic_bounds_check, (param0);
	} // callseq 1
	call.uni calls_leaf, ();
	{
	.param .b32 retval0;
	call.uni (retval0), vprintf, (param0, param1);
	}
$L__BB0_3:
	ret;
}
.visible .entry direct(
	.param .u64 direct_param_0
)
{
$L__BB1_1:
	@%p1 bar.sync 	0;
	ret;
}
.visible .entry via_helper()
{
	{
	.param .b32 retval0;
	call.uni (retval0), helper_sync, (param0);
	}
	ret;
}
.visible .entry warp()
{
	shfl.sync.bfly.b32 	%r1|%p1, %r2, 16, 31, -1;
	ret;
}
.visible .entry red()
{
	bar.red.popc.u32 	%r1, 0, %p1;
	ret;
}
.visible .entry am()
{
	activemask.b32 	%r1;
	ret;
}
.visible .entry mbar()
{
	{ .reg .u64 %oxg; .reg .pred %oxp; mbarrier.try_wait.parity.shared::cta.b64 %oxp, [%r1], %r2; }
	ret;
}
.visible .entry indirect()
{
	mov.u64 	%rd4, helper_sync;
	call.uni (retval0), %rd4, (param0), prototype_0;
	ret;
}
.func  (.param .b32 func_retval0) write_str(.param .b64 a)
{
	ret;
}
.func  (.param .b32 func_retval0) fmt_with_dyn(.param .b64 a)
{
	prototype_2 : .callprototype (.param .b32 _) _ (.param .b64 _, .param .b32 _);
	call (retval0), %rd4, (param0, param1), prototype_2;
	ret;
}
.global .align 8 .u64 VTABLE[2] = {0, write_str};
.visible .entry indirect_plain()
{
	call.uni (retval0), fmt_with_dyn, (param0);
	ret;
}
"#;

    #[test]
    fn plain_kernel_with_calls_and_comments_needs_no_fibers() {
        assert!(!needs_fibers(PTX, "plain"));
    }

    #[test]
    fn collectives_are_found_directly_and_through_calls() {
        for k in ["direct", "via_helper", "warp", "red", "am", "mbar"] {
            assert!(needs_fibers(PTX, k), "{k}");
        }
    }

    #[test]
    fn unknown_entries_are_conservative() {
        assert!(needs_fibers(PTX, "missing"));
        assert!(needs_fibers("", "plain"));
    }

    #[test]
    fn indirect_calls_reach_every_address_taken_function() {
        // `helper_sync` (bar.sync) has its address taken by `indirect`'s `mov`: any indirect
        // call in the module may reach it.
        assert!(needs_fibers(PTX, "indirect"));
        assert!(needs_fibers(PTX, "indirect_plain"));
        let without_sync_target = PTX.replace("mov.u64 \t%rd4, helper_sync;", "");
        assert!(!needs_fibers(&without_sync_target, "indirect_plain"));
        assert!(!needs_fibers(&without_sync_target, "plain"));
    }

    #[test]
    fn footprint_counts_the_shared_arrays_and_stack_a_kernel_reaches() {
        let ptx = "
.extern .shared .align 16 .b8 __oxide_dynamic_shared[];
.shared .align 4 .b8 TILE[32768];
.shared .align 8 .b8 OTHER[100];
.shared .align 16 .f32 UNUSED[4][4];
.func helper()
{
	.local .align 8 .b8 	__local_depot0[4194304];
	mov.u64 	%rd1, OTHER;
	ret;
}
.visible .entry uses_tile()
{
	mov.u64 	%rd1, TILE;
	cvta.shared.u64 	%rd2, %rd1;
	ld.shared.f32 	%f1, [TILE+4];
	ret;
}
.visible .entry uses_both()
{
	.local .align 4 .b8 	__local_depot1[64];
	mov.u64 	%rd1, TILE;
	call.uni helper, ();
	ret;
}
.visible .entry inner()
{
	.shared .align 4 .b8 INNER[4096];
	mov.u64 	%rd1, INNER;
	ret;
}
.visible .entry none()
{
	mov.u64 	%rd1, __oxide_dynamic_shared;
	ret;
}
";
        use super::{footprint, Footprint};
        assert_eq!(footprint(ptx, "uses_tile"), Some(Footprint { static_shared: 32768, local_bytes: 0 }));
        // 32768 + 100 (OTHER, 8-aligned after TILE), the helper's 4 MiB frame is the largest.
        assert_eq!(footprint(ptx, "uses_both"), Some(Footprint { static_shared: 32868, local_bytes: 4194304 }));
        assert_eq!(footprint(ptx, "none"), Some(Footprint::default()), "the dynamic window is not static");
        // LLVM declares an array that only one kernel uses inside that kernel's body.
        assert_eq!(footprint(ptx, "inner"), Some(Footprint { static_shared: 4096, local_bytes: 0 }));
        assert_eq!(footprint(ptx, "missing"), None);
        assert_eq!(super::variable(".shared .align 16 .f32 UNUSED[4][4]", ".shared"), Some(("UNUSED".into(), 64, 16)));
    }

    #[test]
    fn comments_are_stripped_in_one_pass() {
        use super::strip_comments;
        assert_eq!(strip_comments("a // x /* y\nb /* c // d */ e\n// end"), "a \nb   e\n");
        assert_eq!(strip_comments("a /* open"), "a  ");
        assert_eq!(strip_comments("x / y // z"), "x / y ");
        assert_eq!(strip_comments("/"), "/");
        assert_eq!(strip_comments(""), "");
    }

    /// A module the size of a big real one (2 MB) is classified correctly; how long it takes is
    /// measured by `classifying_a_2mb_module` below (`--ignored`).
    #[test]
    fn a_2mb_module_is_classified() {
        let ptx = synthetic_ptx(2 << 20);
        assert!(ptx.len() >= 2 << 20);
        let module = super::Module { parsed: super::parse(&ptx) };
        assert!(!module.needs_fibers("plain_big"));
        assert!(module.needs_fibers("deep_sync"));
        let plain = module.footprint("plain_big").map(|f| (f.static_shared, f.local_bytes));
        assert_eq!(plain, Some((1024, 56)));
        assert_eq!(module.footprint("deep_sync").map(|f| f.static_shared), Some(0));
    }

    #[test]
    #[ignore = "a timing, not a check: cargo test -p oxide-rt --lib classifying_a_2mb -- --ignored --nocapture"]
    fn classifying_a_2mb_module() {
        let ptx: &'static str = Box::leak(synthetic_ptx(2 << 20).into_boxed_str());
        let start = std::time::Instant::now();
        let module = super::module(ptx);
        let parsed = start.elapsed();
        let fibers = module.needs_fibers("deep_sync");
        let footprint = module.footprint("plain_big");
        let again = super::module(ptx).needs_fibers("plain_big");
        println!(
            "{} bytes of PTX: parsed in {parsed:?}, first kernel classified in {:?} ({fibers}, {footprint:?}, {again})",
            ptx.len(),
            start.elapsed()
        );
    }

    #[test]
    fn real_saxpy_ptx_is_plain() {
        let ptx = "
.func _RNvNtCsekQVkFLoVwc_4core9panicking18panic_bounds_check
(
	.param .b64 a,
	.param .b64 b
)
.noreturn;
.visible .entry saxpy(
	.param .f32 saxpy_param_0
)
{
	.reg .pred 	%p<5>;
	mov.u32 	%r2, %tid.x;
	@%p3 bra 	$L__BB0_3;
$L__BB0_3:                              // %exit
	ret;
$L__BB0_4:                              // %panic.i
	{ // callseq 0, 0
	.param .b64 param0;
	st.param.b64 	[param0], %rd2;
	call.uni _RNvNtCsekQVkFLoVwc_4core9panicking18panic_bounds_check, (param0, param1);
	} // callseq 0
}
.func _RNvNtCsekQVkFLoVwc_4core9panicking18panic_bounds_check(
	.param .b64 a,
	.param .b64 b
)
.noreturn
{
	trap;
}
";
        assert!(!needs_fibers(ptx, "saxpy"));
    }

    /// A module of about `bytes` of PTX shaped like a big real one (many functions, `//` comments
    /// on most lines, one block comment at the very end, as LLVM writes none): `leaf_sync` has a barrier and is reached only through
    /// a chain of calls from `deep_sync`; `plain_big` calls every other helper.
    fn synthetic_ptx(bytes: usize) -> String {
        use std::fmt::Write;
        let mut ptx = String::from(
            "//\n// Generated by LLVM NVPTX Back-End\n//\n.version 8.0\n.target sm_90\n.address_size 64\n",
        );
        ptx.push_str(".shared .align 4 .b8 TILE[1024];\n");
        ptx.push_str(".func leaf_sync()\n{\n\tbar.sync \t0; // the only barrier\n\tret;\n}\n");
        let mut n = 0;
        while ptx.len() < bytes {
            let _ = write!(
                ptx,
                ".func helper_{n}(\n\t.param .b64 p0\n)\n{{\n\t.local .align 8 .b8 \t__local_depot{n}[{}];\n",
                8 * (n % 7 + 1)
            );
            for line in 0..20 {
                let _ = writeln!(
                    ptx,
                    "\tadd.s32 \t%r{line}, %r{}, {n};     // %bb.{line} shfl.sync in a comment",
                    line + 1
                );
            }
            let _ = writeln!(ptx, "\tmov.u32 \t%r1, %tid.x;");
            if n % 50 == 49 {
                let _ = writeln!(
                    ptx,
                    "\t{{ // callseq {n}, 0\n\tcall.uni helper_{}, (param0);\n\t}} // callseq {n}",
                    n - 1
                );
            }
            ptx.push_str("\tret;\n}\n");
            n += 1;
        }
        let _ = write!(ptx, ".visible .entry plain_big()\n{{\n\tmov.u64 \t%rd1, TILE;\n");
        for i in 0..n {
            let _ = writeln!(ptx, "\tcall.uni helper_{i}, (param0); // call {i}");
        }
        ptx.push_str("\tret;\n}\n");
        ptx.push_str(".func chain_1()\n{\n\tcall.uni leaf_sync, ();\n\tret;\n}\n");
        ptx.push_str(".visible .entry deep_sync()\n{\n\tcall.uni chain_1, ();\n\tcall.uni helper_0, ();\n\tret;\n}\n");
        ptx.push_str("/* shfl.sync in a block comment */\n");
        ptx
    }
}
