//! The tree a template parses to: nodes for text and tags, expressions for what they read.
//! Every node that can fail at render time keeps its line.

/// A literal written in the template.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Literal {
    Nil,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// `empty`: equal to an empty string, list or object.
    Empty,
    /// `blank`: equal to what `empty` equals, and to nil, false and white space.
    Blank,
}

/// One step of a variable's path: `.name`, `["name"]`, `[0]` or `[other.path]`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Segment {
    Key(String),
    Index(Operand),
}

/// A value in an expression, before filters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Operand {
    Literal(Literal),
    /// A variable and the steps into it. The root is a name (`input`) or, rarely, a bracket
    /// (`["a b"]`), kept as the first segment with an empty root.
    Path {
        root: String,
        segments: Vec<Segment>,
    },
    /// `(start..end)`: every whole number from start to end.
    Range(Box<Operand>, Box<Operand>),
}

/// A filter call: `| name: arg, key: arg`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct FilterCall {
    pub name: String,
    pub args: Vec<Operand>,
    pub named: Vec<(String, Operand)>,
}

/// An operand with its filters.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Expr {
    pub operand: Operand,
    pub filters: Vec<FilterCall>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Comparison {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Contains,
}

/// One comparison or value of a condition, under zero or more `not`s.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Term {
    pub negated: usize,
    pub left: Operand,
    pub compare: Option<(Comparison, Operand)>,
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Logic {
    And,
    Or,
}

/// A condition of `if`, `elsif` and `unless`: terms joined by `and` and `or`, which bind
/// equally and group from the right as in LiquidJS: `a or b and c` is `a or (b and c)`. Kept
/// flat so that a long chain is evaluated in a loop, never by deep recursion.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Condition {
    pub terms: Vec<Term>,
    /// `logic[i]` joins `terms[i]` and what follows it; one fewer than the terms.
    pub logic: Vec<Logic>,
}

/// A branch of `if` (its first condition, then each `elsif`) or of `unless`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Branch {
    /// `unless`: the body renders when the condition is false.
    pub unless: bool,
    pub condition: Condition,
    pub body: Vec<Node>,
}

/// The header of `for` and `tablerow`.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Loop {
    pub variable: String,
    pub collection: Operand,
    /// The collection as written, for `forloop.name` (`item-collection`).
    pub collection_text: String,
    /// `variable-collection`, under which `offset: continue` finds where the last loop stopped.
    pub continue_key: String,
    pub reversed: bool,
    pub limit: Option<Operand>,
    pub offset: Option<Operand>,
    /// `offset: continue`: start where the last loop over the same variable and collection
    /// stopped.
    pub offset_continue: bool,
    /// tablerow's `cols`.
    pub cols: Option<Operand>,
}

#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Node {
    /// Text as written, from its line on.
    Text {
        line: u32,
        text: String,
    },
    Output {
        line: u32,
        expr: Expr,
    },
    Assign {
        line: u32,
        name: String,
        expr: Expr,
    },
    If {
        line: u32,
        branches: Vec<Branch>,
        otherwise: Vec<Node>,
    },
    Case {
        line: u32,
        subject: Operand,
        /// `when` (values) and `else` (none) in their order: as in Ruby Liquid, every `when`
        /// that matches renders, and an `else` renders when no `when` before it matched.
        whens: Vec<(Option<Vec<Operand>>, Vec<Node>)>,
    },
    For {
        line: u32,
        header: Box<Loop>,
        body: Vec<Node>,
        otherwise: Vec<Node>,
    },
    Tablerow {
        line: u32,
        header: Box<Loop>,
        body: Vec<Node>,
    },
    Break,
    Continue,
    Cycle {
        line: u32,
        group: Option<Operand>,
        values: Vec<Operand>,
    },
    Increment {
        name: String,
    },
    Decrement {
        name: String,
    },
    /// `{% ifchanged %}`: renders its body when it differs from the last time.
    IfChanged {
        body: Vec<Node>,
    },
    System {
        line: u32,
        body: Vec<Node>,
    },
}
