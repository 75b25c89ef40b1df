# Reference values of Feldt's (1965) interval of coefficient alpha from psych::alpha.ci,
# frozen into tests/results/alpha_ci_psych.csv for tests/test_reliability.py.
# Run: Rscript tests/results/make_alpha_ci_reference.R   (from the repository root)
# Produced with R 4.2.2 Patched (2022-11-10 r83330), psych 2.2.9.
cases <- data.frame(
  alpha = c(0.8, 0.8, 0.5, 0.95, 0.3, -0.2, 0.9, 0.7),
  n = c(30, 30, 12, 100, 8, 20, 16, 5),
  k = c(10, 10, 5, 20, 3, 4, 100, 2),
  p = c(0.95, 0.94, 0.9, 0.99, 0.8, 0.94, 0.94, 0.5)
)
rows <- lapply(seq_len(nrow(cases)), function(i) {
  c <- cases[i, ]
  ci <- psych::alpha.ci(c$alpha, n.obs = c$n, n.var = c$k, p.val = 1 - c$p)
  data.frame(alpha = c$alpha, n = c$n, k = c$k, ci_prob = c$p,
             lower = ci$lower.ci, upper = ci$upper.ci)
})
out <- do.call(rbind, rows)
header <- c(
  paste0("# psych::alpha.ci(alpha, n.obs = n, n.var = k, p.val = 1 - ci_prob); ",
         R.version.string, "; psych ", as.character(packageVersion("psych"))),
  "# made by tests/results/make_alpha_ci_reference.R")
writeLines(header, "tests/results/alpha_ci_psych.csv")
suppressWarnings(write.table(format(out, digits = 17), "tests/results/alpha_ci_psych.csv",
            sep = ",", row.names = FALSE, quote = FALSE, append = TRUE))
