use auto_script::{InputBudget, evaluate};
use serde_json::{Value, json};
fn main() {
    let which = std::env::args().nth(1).unwrap_or_default();
    let n: usize = std::env::args()
        .nth(2)
        .map(|s| s.parse().unwrap())
        .unwrap_or(1000);
    let input = json!({ "id": "brief-1", "owner": "ada@example.com", "n": 0 });
    let data = json!({ "n": 41 });
    let items: Vec<Value> = (0..100)
        .map(|i| json!({ "id": i, "name": format!("item {i}"), "price": i }))
        .collect();
    let list = json!({ "items": items });
    let (expr, vars): (&str, Vec<(&str, &Value)>) = match which.as_str() {
        "spread" => (
            "({ ...$input, n: $data.n + 1 })",
            vec![("$input", &input), ("$data", &data)],
        ),
        "filter" => (
            "$data.items.filter((item: { price: number }) => item.price > 50)",
            vec![("$data", &list)],
        ),
        "length" => ("$data.items.length", vec![("$data", &list)]),
        _ => ("1", vec![]),
    };
    evaluate(expr, &vars, 0, &mut InputBudget::new()).unwrap();
    for _ in 0..n {
        std::hint::black_box(evaluate(expr, &vars, 0, &mut InputBudget::new()).unwrap());
    }
}
