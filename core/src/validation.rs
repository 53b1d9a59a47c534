//! Argument-validation problems (SPEC V1–V3).
//!
//! A [`Problem`] says *where* an argument set was rejected and *why*, by kind — never
//! with the rejected value: arguments carry keystrokes, commands and secrets (V3), so
//! there is no field a value could travel in.

/// Why an argument was rejected.
///
/// ```
/// use backstop_core::ProblemKind;
/// assert_eq!(ProblemKind::MissingArgument.name(), "missing_argument");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum ProblemKind {
    /// A required argument was not given.
    MissingArgument,
    /// An argument the tool does not take was given.
    UnexpectedArgument,
    /// An argument had the wrong type; `expected` names the type wanted (`integer`).
    InvalidType {
        /// The type wanted, in words.
        expected: String,
    },
    /// Any other problem: a kind name and a message, both free of input values.
    Other {
        /// The kind, shown as `[type=<kind>]`.
        kind: String,
        /// The message line.
        message: String,
    },
}

impl ProblemKind {
    /// The kind's name, as shown in `[type=<kind>]` (V2).
    pub fn name(&self) -> &str {
        match self {
            ProblemKind::MissingArgument => "missing_argument",
            ProblemKind::UnexpectedArgument => "unexpected_keyword_argument",
            ProblemKind::InvalidType { .. } => "invalid_type",
            ProblemKind::Other { kind, .. } => kind,
        }
    }
}

/// One rejected part of an argument set.
///
/// ```
/// use backstop_core::Problem;
/// let problem = Problem::invalid_type(["target", "pane"], "string");
/// assert_eq!(problem.location_text(), "target.pane");
/// assert_eq!(Problem::root_other("invalid_arguments", "Arguments must be an object").location_text(), "__root__");
/// ```
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct Problem {
    /// The path to the rejected part, outermost first; empty for the whole argument set.
    pub location: Vec<String>,
    /// Why it was rejected.
    pub kind: ProblemKind,
}

impl Problem {
    /// A required argument `name` was not given.
    pub fn missing_argument(name: impl Into<String>) -> Self {
        Self { location: vec![name.into()], kind: ProblemKind::MissingArgument }
    }

    /// An argument `name` the tool does not take was given.
    pub fn unexpected_argument(name: impl Into<String>) -> Self {
        Self { location: vec![name.into()], kind: ProblemKind::UnexpectedArgument }
    }

    /// The argument at `location` should have been of type `expected`.
    pub fn invalid_type<I, S>(location: I, expected: impl Into<String>) -> Self
    where
        I: IntoIterator<Item = S>,
        S: Into<String>,
    {
        Self {
            location: location.into_iter().map(Into::into).collect(),
            kind: ProblemKind::InvalidType { expected: expected.into() },
        }
    }

    /// A problem of the whole argument set, of a kind of its own.
    pub fn root_other(kind: impl Into<String>, message: impl Into<String>) -> Self {
        Self {
            location: Vec::new(),
            kind: ProblemKind::Other { kind: kind.into(), message: message.into() },
        }
    }

    /// The location as a dotted path, `__root__` for the whole argument set (V2).
    pub fn location_text(&self) -> String {
        if self.location.is_empty() {
            "__root__".to_owned()
        } else {
            self.location.join(".")
        }
    }
}
