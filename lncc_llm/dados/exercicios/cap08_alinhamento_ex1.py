n_pairs = len(pairs)
tokens = train_batch["completion_mask"][:, 1:].sum(dim=1).double()   # por resposta
mean_policy, mean_reference = train_policy / tokens, train_reference / tokens
losses_sum, margins_sum, losses_mean = [], [], []
print(f"{'β':>5} {'perda (soma)':>13} {'margem':>8} {'perda (média)':>14}")
for beta in (0.01, 0.1, 0.5, 1.0):
    summed = dpo_loss(train_policy[:n_pairs], train_policy[n_pairs:],
                      train_reference[:n_pairs], train_reference[n_pairs:], beta=beta)
    averaged = dpo_loss(mean_policy[:n_pairs], mean_policy[n_pairs:],
                        mean_reference[:n_pairs], mean_reference[n_pairs:], beta=beta)
    losses_sum.append(summed.loss.item())
    margins_sum.append(summed.margins.mean().item())
    losses_mean.append(averaged.loss.item())
    print(f"{beta:>5} {losses_sum[-1]:>13.3f} {margins_sum[-1]:>8.2f} {losses_mean[-1]:>14.3f}")
