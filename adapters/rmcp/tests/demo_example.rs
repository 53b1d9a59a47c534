//! The `demo` example runs, and shows the difference it claims to show.

mod support;

#[test]
fn the_demo_shows_both_sides() {
    let output = std::process::Command::new(support::example_binary("demo"))
        .output()
        .expect("the demo runs");
    assert!(output.status.success(), "{output:?}");
    let stdout = String::from_utf8_lossy(&output.stdout);
    let (without, with) = stdout
        .split_once("WITH backstop")
        .expect("both halves are printed");
    assert!(without.contains("\"code\": -32603"), "{without}");
    assert!(
        without.contains("hunter2"),
        "the bare server leaks the value: {without}"
    );
    assert!(with.contains("\"isError\": true"), "{with}");
    assert!(
        with.contains("Pane not found: %99\\nCall list_panes"),
        "{with}"
    );
    assert_eq!(with.matches("hunter2").count(), 1, "V3: {with}");
    // V2: serde names no field, but the schema does: the bad argument is `count`.
    assert!(
        with.contains(
            "2 validation errors for takes_int\\ncount\\n  Input should be a valid integer [type=invalid_type]"
        ),
        "V2: {with}"
    );
    assert!(!with.contains("__root__"), "V2: {with}");
    assert!(with.contains("[... truncated "), "{with}");
    assert!(with.contains("line 240000 of output\\nPROMPT $"), "{with}");
}
