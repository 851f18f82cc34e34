#include "core/expr.h"

#include "core/expr_tree.h"
#include "core/untrusted_json.h"

#include <algorithm>
#include <cctype>
#include <limits>
#include <vector>

namespace kerncast {

struct Expr::Node {
    enum class Kind { Number, Name, Unary, Binary, Call, List } kind = Kind::Number;
    int64_t value = 0;
    std::string name;  // Name: the identifier; Unary/Binary: the operator; Call: the function
    std::vector<std::shared_ptr<const Node>> children;
    size_t begin = 0, end = 0;  // span in the source text, so evaluation errors can quote the failing part
    int depth = 1;              // of the tree below and including this node
};

namespace {

using NodePtr = std::shared_ptr<const Expr::Node>;
using Kind = Expr::Node::Kind;

// Parsing, evaluation and destruction recurse once per level of the tree; an expression comes from files and from
// kernels an LLM wrote, so its length and depth are capped far above anything a launch plan needs.
constexpr size_t kMaxChars = 4096;
constexpr int kMaxNesting = 64;     // parentheses, function calls and unary operators inside each other
constexpr int kMaxTreeDepth = 256;  // also long chains such as 1+1+1+...

bool is_ident_start(char c) { return std::isalpha(static_cast<unsigned char>(c)) || c == '_'; }
bool is_ident_char(char c) { return std::isalnum(static_cast<unsigned char>(c)) || c == '_'; }

class Parser {
public:
    Parser(std::string_view text, const SourceLocation& where, bool allow_conditions)
        : m_text(text), m_where(where), m_conditions(allow_conditions) {}

    NodePtr parseAll() {
        if (m_text.size() > kMaxChars)
            throw Error(m_where, "expected an expression of at most " + std::to_string(kMaxChars) +
                                     " characters, found " + std::to_string(m_text.size()) + ": '" +
                                     shorten_for_message(m_text, 60) + "'");
        skipSpace();
        if (m_pos >= m_text.size())
            fail("expected an expression");
        auto root = parseOr();
        skipSpace();
        if (m_pos < m_text.size()) {
            if (!m_conditions && isConditionOperatorAhead())
                fail("expected + - * / % or the end of the expression (comparisons and && || ! are only allowed in "
                     "where conditions)");
            fail(std::string("expected an operator or the end of the expression, found '") + m_text[m_pos] + "'");
        }
        return root;
    }

private:
    [[noreturn]] void fail(const std::string& what) const {
        throw Error(m_where, what + " at column " + std::to_string(m_pos + 1) + " in '" +
                                 shorten_for_message(m_text, 200) + "'");
    }

    // Counts one level of nesting for the life of a recursive descent.
    struct Nesting {
        explicit Nesting(Parser& p) : parser(p) {
            if (++parser.m_nesting > kMaxNesting)
                parser.fail("expected at most " + std::to_string(kMaxNesting) +
                            " levels of parentheses, calls and signs inside each other");
        }
        ~Nesting() { --parser.m_nesting; }
        Parser& parser;
    };

    void skipSpace() {
        while (m_pos < m_text.size() && std::isspace(static_cast<unsigned char>(m_text[m_pos])))
            ++m_pos;
    }

    bool peek(std::string_view op) {
        skipSpace();
        return m_text.substr(m_pos, op.size()) == op;
    }

    // A word operator (and, or, not, in) only where the word ends: `order` is a name, not `or` + `der`.
    bool peekWord(std::string_view word) {
        if (!peek(word))
            return false;
        const size_t after = m_pos + word.size();
        return after >= m_text.size() || !is_ident_char(m_text[after]);
    }

    bool isConditionOperatorAhead() {
        for (std::string_view op : {"<", ">", "==", "!=", "&&", "||", "!"})
            if (peek(op))
                return true;
        for (std::string_view word : {"and", "or", "not", "in"})
            if (peekWord(word))
                return true;
        return false;
    }

    NodePtr make(Kind kind, std::string name, std::vector<NodePtr> children, size_t begin, size_t end,
                 int64_t value = 0) const {
        int depth = 0;
        for (const auto& c : children)
            depth = std::max(depth, c->depth);
        if (depth + 1 > kMaxTreeDepth)
            fail("expected an expression at most " + std::to_string(kMaxTreeDepth) +
                 " operations deep (split it, or use min/max)");
        auto n = std::make_shared<Expr::Node>();
        n->depth = depth + 1;
        n->kind = kind;
        n->name = std::move(name);
        n->children = std::move(children);
        n->begin = begin;
        n->end = end;
        n->value = value;
        return n;
    }

    // Binary level: operands from `next`, operators from `ops` (longest first where prefixes overlap).
    template<typename Next>
    NodePtr parseLevel(std::initializer_list<std::string_view> ops, Next next) {
        skipSpace();
        const size_t begin = m_pos;
        auto lhs = (this->*next)();
        for (;;) {
            std::string_view matched;
            for (auto op : ops)
                if (peek(op)) {
                    matched = op;
                    break;
                }
            if (matched.empty())
                return lhs;
            // "<" must not swallow "<=", and "!" in "!=" is handled by the equality level listing "!=" first.
            m_pos += matched.size();
            auto rhs = (this->*next)();
            lhs = make(Kind::Binary, std::string(matched), {lhs, rhs}, begin, m_pos);
        }
    }

    NodePtr parseOr() {
        const Nesting nesting(*this);
        if (!m_conditions)
            return parseAdditive();
        return parseLogical("||", "or", &Parser::parseAnd);
    }
    NodePtr parseAnd() { return parseLogical("&&", "and", &Parser::parseNot); }

    // Python's `not` binds looser than comparisons (`not X == 1` is `!(X == 1)`); C's `!` binds tight.
    NodePtr parseNot() {
        skipSpace();
        const size_t begin = m_pos;
        if (!peekWord("not"))
            return parseEquality();
        m_pos += 3;
        const Nesting nesting(*this);
        auto operand = parseNot();
        return make(Kind::Unary, "!", {operand}, begin, m_pos);
    }

    // `a || b` and Python's `a or b` (likewise && / and) are one operator.
    NodePtr parseLogical(std::string_view symbol, std::string_view word, NodePtr (Parser::*next)()) {
        skipSpace();
        const size_t begin = m_pos;
        auto lhs = (this->*next)();
        for (;;) {
            if (peek(symbol))
                m_pos += symbol.size();
            else if (peekWord(word))
                m_pos += word.size();
            else
                return lhs;
            auto rhs = (this->*next)();
            lhs = make(Kind::Binary, std::string(symbol), {lhs, rhs}, begin, m_pos);
        }
    }

    // Comparisons chain as in Python: `32 <= X * Y <= 1024` means `32 <= X * Y && X * Y <= 1024` (C would compare
    // the 0 or 1 of the first comparison with 1024, which is never what a condition means). `in [a, b]` and
    // `not in [a, b]` test membership in a list of expressions.
    NodePtr parseComparisonChain(std::initializer_list<std::string_view> ops, NodePtr (Parser::*next)(),
                                 bool membership) {
        skipSpace();
        const size_t begin = m_pos;
        auto lhs = (this->*next)();
        NodePtr chain;
        for (;;) {
            std::string matched;
            for (auto op : ops)
                if (peek(op)) {
                    matched = op;
                    break;
                }
            if (matched.empty() && membership) {
                if (peekWord("in")) {
                    matched = "in";
                } else if (peekWord("not")) {
                    const size_t save = m_pos;
                    m_pos += 3;
                    if (peekWord("in"))
                        matched = "not in";
                    m_pos = save;
                }
            }
            if (matched.empty())
                return chain ? chain : lhs;
            if (matched == "not in") {
                m_pos += 3;
                skipSpace();
                m_pos += 2;
            } else {
                m_pos += matched.size();
            }
            auto rhs = (matched == "in" || matched == "not in") ? parseList() : (this->*next)();
            auto link = make(Kind::Binary, matched, {lhs, rhs}, begin, m_pos);
            chain = chain ? make(Kind::Binary, "&&", {chain, link}, begin, m_pos) : link;
            lhs = rhs;
        }
    }
    NodePtr parseEquality() { return parseComparisonChain({"==", "!="}, &Parser::parseRelational, true); }
    NodePtr parseRelational() { return parseComparisonChain({"<=", ">=", "<", ">"}, &Parser::parseAdditive, false); }
    NodePtr parseAdditive() { return parseLevel({"+", "-"}, &Parser::parseMultiplicative); }
    // `//` is Python's floor division (rounds toward minus infinity); `/` truncates toward zero as in C.
    NodePtr parseMultiplicative() { return parseLevel({"//", "*", "/", "%"}, &Parser::parseUnary); }

    // `[a, b, ...]` or `(a, b, ...)`: the right side of `in`.
    NodePtr parseList() {
        skipSpace();
        const size_t begin = m_pos;
        char close = 0;
        if (peek("["))
            close = ']';
        else if (peek("("))
            close = ')';
        else
            fail("expected a list like [1, 2, 4] after 'in'");
        ++m_pos;
        std::vector<NodePtr> items;
        skipSpace();
        while (!peek(std::string_view(&close, 1))) {
            items.push_back(parseOr());
            skipSpace();
            if (peek(","))
                ++m_pos;
            else if (!peek(std::string_view(&close, 1)))
                fail(std::string("expected ',' or '") + close + "' in the list");
            skipSpace();
        }
        ++m_pos;
        return make(Kind::List, {}, std::move(items), begin, m_pos);
    }

    NodePtr parseUnary() {
        skipSpace();
        const size_t begin = m_pos;
        if (peek("-")) {
            ++m_pos;
            const Nesting nesting(*this);
            auto operand = parseUnary();
            return make(Kind::Unary, "-", {operand}, begin, m_pos);
        }
        if (peek("!") && !peek("!=")) {
            if (!m_conditions)
                fail("expected a number, a name or '(' ('!' is only allowed in where conditions)");
            ++m_pos;
            const Nesting nesting(*this);
            auto operand = parseUnary();
            return make(Kind::Unary, "!", {operand}, begin, m_pos);
        }
        return parsePower();
    }

    // `a ** b` (Python's power; right-associative, binds tighter than a sign on its left: -2 ** 2 is -4).
    NodePtr parsePower() {
        skipSpace();
        const size_t begin = m_pos;
        auto base = parsePrimary();
        if (!peek("**"))
            return base;
        m_pos += 2;
        const Nesting nesting(*this);
        auto exponent = parseUnary();
        return make(Kind::Binary, "**", {base, exponent}, begin, m_pos);
    }

    NodePtr parsePrimary() {
        skipSpace();
        const size_t begin = m_pos;
        if (m_pos >= m_text.size())
            fail("expected a number, a name or '(' but the expression ended");
        const char c = m_text[m_pos];
        if (std::isdigit(static_cast<unsigned char>(c))) {
            int64_t v = 0;
            while (m_pos < m_text.size() && std::isdigit(static_cast<unsigned char>(m_text[m_pos]))) {
                const int digit = m_text[m_pos] - '0';
                if (__builtin_mul_overflow(v, int64_t{10}, &v) || __builtin_add_overflow(v, int64_t{digit}, &v)) {
                    m_pos = begin;
                    fail("expected an integer that fits in 64 bits");
                }
                ++m_pos;
            }
            if (m_pos < m_text.size() && is_ident_char(m_text[m_pos]))
                fail("expected an integer (no suffixes or decimals)");
            if (m_pos < m_text.size() && m_text[m_pos] == '.')
                fail("expected an integer (expressions are integer-only)");
            return make(Kind::Number, {}, {}, begin, m_pos, v);
        }
        if (is_ident_start(c)) {
            while (m_pos < m_text.size() && is_ident_char(m_text[m_pos]))
                ++m_pos;
            std::string ident(m_text.substr(begin, m_pos - begin));
            if (m_conditions && (ident == "True" || ident == "False"))
                return make(Kind::Number, {}, {}, begin, m_pos, ident == "True" ? 1 : 0);
            skipSpace();
            if (m_pos < m_text.size() && m_text[m_pos] == '(') {
                if (ident != "min" && ident != "max" && ident != "ceil_div") {
                    m_pos = begin;
                    fail("expected a function min, max or ceil_div, found '" + ident + "'");
                }
                ++m_pos;
                // min and max take two or more arguments (as in Python); ceil_div exactly two.
                std::vector<NodePtr> args{parseOr()};
                for (;;) {
                    skipSpace();
                    if (!peek(","))
                        break;
                    ++m_pos;
                    if (ident == "ceil_div" && args.size() == 2)
                        fail("expected ')' (ceil_div takes two arguments)");
                    args.push_back(parseOr());
                }
                if (args.size() < 2)
                    fail("expected ',' (" + ident + " takes " + (ident == "ceil_div" ? "two" : "two or more") +
                         " arguments)");
                if (!peek(")"))
                    fail("expected ')' closing " + ident + "(");
                ++m_pos;
                return make(Kind::Call, ident, std::move(args), begin, m_pos);
            }
            return make(Kind::Name, ident, {}, begin, m_pos);
        }
        if (c == '(') {
            ++m_pos;
            auto inner = parseOr();
            skipSpace();
            if (!peek(")"))
                fail("expected ')'");
            ++m_pos;
            return inner;
        }
        fail(std::string("expected a number, a name or '(', found '") + c + "'");
    }

    std::string_view m_text;
    const SourceLocation& m_where;
    bool m_conditions;
    size_t m_pos = 0;
    int m_nesting = 0;
};

struct Evaluator {
    const std::string& text;
    const SourceLocation& where;
    const Bindings& names;

    [[noreturn]] void fail(const Expr::Node& n, const std::string& what) const {
        const std::string part = text.substr(n.begin, n.end - n.begin);
        std::string message = what + " in '" + part + "'";
        if (part != text)
            message += " (in '" + text + "')";
        throw Error(where, message);
    }

    int64_t eval(const Expr::Node& n) const {
        switch (n.kind) {
        case Kind::Number:
            return n.value;
        case Kind::Name: {
            if (auto it = names.find(n.name); it != names.end())
                return it->second;
            std::string known;
            for (const auto& [k, v] : names)
                known += (known.empty() ? "" : ", ") + k;
            throw Error(where, "unknown name '" + n.name + "' in '" + text +
                                   "' (known: " + (known.empty() ? "none" : known) + ")");
        }
        case Kind::Unary: {
            const int64_t v = eval(*n.children[0]);
            if (n.name == "!")
                return v == 0 ? 1 : 0;
            int64_t r = 0;
            if (__builtin_sub_overflow(int64_t{0}, v, &r))
                fail(n, "integer overflow");
            return r;
        }
        case Kind::Binary:
            return binary(n);
        case Kind::List:
            fail(n, "a list is only allowed after 'in'");
        case Kind::Call: {
            if (n.name == "min" || n.name == "max") {
                int64_t r = eval(*n.children[0]);
                for (size_t i = 1; i < n.children.size(); ++i)
                    r = n.name == "min" ? std::min(r, eval(*n.children[i])) : std::max(r, eval(*n.children[i]));
                return r;
            }
            const int64_t a = eval(*n.children[0]);
            const int64_t b = eval(*n.children[1]);
            // ceil_div: rounds the true quotient up, also for negative operands.
            if (b == 0)
                fail(n, "division by zero");
            if (a == std::numeric_limits<int64_t>::min() && b == -1)
                fail(n, "integer overflow");
            int64_t q = a / b;
            if (a % b != 0 && ((a < 0) == (b < 0)))
                ++q;
            return q;
        }
        }
        return 0;
    }

    int64_t binary(const Expr::Node& n) const {
        const std::string& op = n.name;
        // Logical operators short-circuit so that `B > 0 && N / B > 4` is safe.
        if (op == "&&")
            return eval(*n.children[0]) != 0 && eval(*n.children[1]) != 0 ? 1 : 0;
        if (op == "||")
            return eval(*n.children[0]) != 0 || eval(*n.children[1]) != 0 ? 1 : 0;
        if (op == "in" || op == "not in") {
            const int64_t a = eval(*n.children[0]);
            bool found = false;
            for (const auto& item : n.children[1]->children)
                if (eval(*item) == a) {
                    found = true;
                    break;
                }
            return found == (op == "in") ? 1 : 0;
        }
        const int64_t a = eval(*n.children[0]);
        const int64_t b = eval(*n.children[1]);
        int64_t r = 0;
        if (op == "**") {
            if (b < 0)
                fail(n, "negative exponent (expressions are integer-only)");
            r = 1;
            for (int64_t i = 0; i < b; ++i) {
                if (__builtin_mul_overflow(r, a, &r))
                    fail(n, "integer overflow");
                if (r == 0 || r == 1)
                    break;  // 0 and 1 stay what they are; -1 alternates, which the loop bound handles
            }
            if (a == -1)
                r = (b % 2 == 0) ? 1 : -1;
            return r;
        }
        if (op == "//") {
            if (b == 0)
                fail(n, "division by zero");
            if (a == std::numeric_limits<int64_t>::min() && b == -1)
                fail(n, "integer overflow");
            int64_t q = a / b;
            if (a % b != 0 && ((a < 0) != (b < 0)))
                --q;
            return q;
        }
        if (op == "+") {
            if (__builtin_add_overflow(a, b, &r))
                fail(n, "integer overflow");
            return r;
        }
        if (op == "-") {
            if (__builtin_sub_overflow(a, b, &r))
                fail(n, "integer overflow");
            return r;
        }
        if (op == "*") {
            if (__builtin_mul_overflow(a, b, &r))
                fail(n, "integer overflow");
            return r;
        }
        if (op == "/" || op == "%") {
            if (b == 0)
                fail(n, op == "/" ? "division by zero" : "remainder by zero");
            if (a == std::numeric_limits<int64_t>::min() && b == -1)
                fail(n, "integer overflow");
            return op == "/" ? a / b : a % b;
        }
        if (op == "<")
            return a < b;
        if (op == "<=")
            return a <= b;
        if (op == ">")
            return a > b;
        if (op == ">=")
            return a >= b;
        if (op == "==")
            return a == b;
        if (op == "!=")
            return a != b;
        fail(n, "unknown operator '" + op + "'");
    }
};

void collect_names(const Expr::Node& n, std::set<std::string>& out) {
    if (n.kind == Kind::Name)
        out.insert(n.name);
    for (const auto& c : n.children)
        collect_names(*c, out);
}

}  // namespace

Expr::Expr() = default;

Expr Expr::parse(std::string_view text, const SourceLocation& where, bool allow_conditions) {
    Expr e;
    e.m_root = Parser(text, where, allow_conditions).parseAll();
    e.m_text = std::string(text);
    e.m_where = where;
    return e;
}

Expr Expr::constant(int64_t value) {
    auto n = std::make_shared<Node>();
    n->kind = Node::Kind::Number;
    n->value = value;
    Expr e;
    e.m_text = std::to_string(value);
    n->end = e.m_text.size();
    e.m_root = std::move(n);
    return e;
}

int64_t Expr::eval(const Bindings& names) const {
    if (!m_root)
        throw Error(m_where, "expected an expression, but none was given");
    return Evaluator{m_text, m_where, names}.eval(*m_root);
}

namespace {

ExprTree to_tree(const Expr::Node& n) {
    static_assert(static_cast<int>(ExprTree::Kind::List) == static_cast<int>(Kind::List));
    ExprTree t;
    t.kind = static_cast<ExprTree::Kind>(n.kind);
    t.value = n.value;
    t.name = n.name;
    for (const auto& c : n.children)
        t.children.push_back(to_tree(*c));
    return t;
}

}  // namespace

// An Expr does not remember whether it was parsed as a condition; parsing its text again as one gives the same tree
// for every expression (an arithmetic expression has no condition operators to read differently).
ExprTree expr_tree(const Expr& e) {
    if (e.empty())
        throw Error(e.where(), "expected an expression, but none was given");
    return to_tree(*Parser(e.text(), e.where(), true).parseAll());
}

std::set<std::string> Expr::names() const {
    std::set<std::string> out;
    if (m_root)
        collect_names(*m_root, out);
    return out;
}

}  // namespace kerncast
