//! Decides from a kernel's PTX whether the CPU executor must run its threads as fibers.
//!
//! A kernel needs fibers when its `.entry`, or any `.func` it calls (transitively), contains an
//! instruction at which threads of a block or warp wait for each other. Everything else runs as
//! a plain loop. An indirect call (`call %rd4, ...`: `dyn` methods, e.g. core's formatting in a
//! panic path) may reach any function whose address is taken anywhere in the module (an operand
//! of an instruction or a global initialiser such as a vtable), so it counts as a call to all of
//! them. When in doubt (entry missing) the answer is "fibers": that is only slower, never wrong.

use std::collections::{HashMap, HashSet};

/// Instruction prefixes that make threads meet: block barriers and warp collectives.
const COLLECTIVE: &[&str] = &["bar.", "barrier.", "shfl.", "vote.", "activemask", "match.", "redux.sync", "elect.sync"];

#[derive(Default)]
struct Function {
    collective: bool,
    indirect_call: bool,
    calls: Vec<String>,
}

/// Whether kernel `entry` of `ptx` uses block or warp collectives (see the module docs).
pub(crate) fn needs_fibers(ptx: &str, entry: &str) -> bool {
    let Parsed { functions, entries, mentioned } = parse(ptx);
    if !entries.contains(entry) {
        return true;
    }
    let address_taken: Vec<String> = functions.keys().filter(|f| mentioned.contains(*f)).cloned().collect();
    let mut seen = HashSet::new();
    let mut todo = vec![entry.to_string()];
    while let Some(name) = todo.pop() {
        if !seen.insert(name.clone()) {
            continue;
        }
        // Calls to functions without a body (`.extern .func vprintf`) do not synchronise.
        if let Some(f) = functions.get(&name) {
            if f.collective {
                return true;
            }
            todo.extend(f.calls.iter().cloned());
            if f.indirect_call {
                todo.extend(address_taken.iter().cloned());
            }
        }
    }
    false
}

struct Parsed {
    /// Every `.entry`/`.func` defined (with a body) in the module.
    functions: HashMap<String, Function>,
    entries: HashSet<String>,
    /// Identifiers used as operands or in initialisers, i.e. not as a header or a direct callee.
    mentioned: HashSet<String>,
}

fn parse(ptx: &str) -> Parsed {
    let text = strip_comments(ptx);
    let mut functions: HashMap<String, Function> = HashMap::new();
    let mut entries = HashSet::new();
    let mut mentioned = HashSet::new();
    let mut current: Option<String> = None;
    let mut pending: Option<(String, bool)> = None; // header seen, body not yet opened
    let mut depth = 0usize;
    // Statements end at `;`, `{` or `}`; keep the delimiter to track nesting.
    let mut start = 0;
    for (i, ch) in text.char_indices() {
        if !matches!(ch, ';' | '{' | '}') {
            continue;
        }
        let stmt = text[start..i].trim();
        start = i + 1;
        if depth == 0 {
            if let Some((name, is_entry)) = header(stmt) {
                pending = Some((name, is_entry));
            } else {
                mention(stmt, &mut mentioned); // e.g. a vtable: `.global .u64 vt[2] = {f, g}`
            }
            match ch {
                '{' => {
                    if let Some((name, is_entry)) = pending.take() {
                        if is_entry {
                            entries.insert(name.clone());
                        }
                        functions.entry(name.clone()).or_default();
                        current = Some(name);
                    }
                    depth = 1;
                }
                // A declaration (`.func f(...) .noreturn;`) has no body.
                _ => pending = None,
            }
            continue;
        }
        if let Some(f) = current.as_ref().and_then(|name| functions.get_mut(name)) {
            scan_instruction(stmt, f, &mut mentioned);
        }
        match ch {
            '{' => depth += 1,
            '}' => {
                depth -= 1;
                if depth == 0 {
                    current = None;
                }
            }
            _ => {}
        }
    }
    Parsed { functions, entries, mentioned }
}

fn mention(text: &str, mentioned: &mut HashSet<String>) {
    for word in text.split(|c: char| !is_ident(c)).filter(|w| !w.is_empty()) {
        mentioned.insert(word.to_string());
    }
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

fn scan_instruction(stmt: &str, f: &mut Function, mentioned: &mut HashSet<String>) {
    let mut s = stmt;
    // Labels (`$L__BB0_3:`) and guard predicates (`@%p1`, `@!%p1`).
    while let Some(colon) = s.find(':') {
        let label = &s[..colon];
        if label.trim().chars().all(is_ident) && !label.trim().is_empty() {
            s = s[colon + 1..].trim_start();
        } else {
            break;
        }
    }
    if s.starts_with('@') {
        s = s.split_once(char::is_whitespace).map_or("", |(_, rest)| rest.trim_start());
    }
    let opcode = s.split(|c: char| c.is_whitespace()).next().unwrap_or("");
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
        mention(s, mentioned);
    }
}

fn strip_comments(ptx: &str) -> String {
    let mut out = String::with_capacity(ptx.len());
    let mut rest = ptx;
    loop {
        let line = rest.find("//");
        let block = rest.find("/*");
        match (line, block) {
            (Some(l), b) if b.is_none_or(|b| l < b) => {
                out.push_str(&rest[..l]);
                rest = rest[l..].find('\n').map_or("", |n| &rest[l + n..]);
            }
            (_, Some(b)) => {
                out.push_str(&rest[..b]);
                out.push(' ');
                rest = rest[b + 2..].find("*/").map_or("", |e| &rest[b + 2 + e + 2..]);
            }
            _ => {
                out.push_str(rest);
                return out;
            }
        }
    }
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
        for k in ["direct", "via_helper", "warp", "red", "am"] {
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
}
