shifted = [r + 10 for r in MEAN_REWARDS]
variances = {}
for name, rewards_list in (("originais", MEAN_REWARDS), ("+10", shifted)):
    mean_r = sum(rewards_list) / len(rewards_list)
    plain = policy_gradient_variance(rewards_list, baseline=0.0)
    based = policy_gradient_variance(rewards_list, baseline=mean_r)
    variances[name] = (plain, based)
    print(f"recompensas {name:<9}: sem baseline {plain:7.3f} | com baseline {based:.3f}   "
          f"(conta exata: {exact_variance(rewards_list, 0.0):7.3f} | {exact_variance(rewards_list, mean_r):.3f})")
var_plain_shifted, var_base_shifted = variances["+10"]
